#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that adds round-trip time, for machines whose kernel has no netem qdisc.

    delay-proxy.py TARGET_PORT --rtt MS [--port N]

Forwards every connection to 127.0.0.1:TARGET_PORT. Each chunk of bytes, in either direction, is
delivered half the round trip after it arrived, in order; a new connection's first bytes wait one more
round trip, as TCP's handshake would cost them. When either side ends its connection, both end.
At most 4 MiB are on their way in each direction (a TCP window): bandwidth is
otherwise not limited. Prints
"Delaying on 127.0.0.1 port N" once listening.
"""
import asyncio
import sys

target = int(sys.argv[1])
rtt = float(sys.argv[sys.argv.index('--rtt') + 1]) / 1000
port = int(sys.argv[sys.argv.index('--port') + 1]) if '--port' in sys.argv else 0
# Bytes on their way in one direction at most: 4 MiB, a 1.6 Gb/s link's bandwidth-delay product at 20 ms.
WINDOW = 4 << 20


async def pipe(reader, writer, one_way):
    """Copies reader to writer, each chunk due one_way seconds after it was read, with at most
    WINDOW bytes on their way (a TCP window: a sender that nobody reads stops there)."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()
    in_flight = 0
    room = asyncio.Event()
    room.set()

    async def deliver():
        nonlocal in_flight
        while True:
            due, chunk = await queue.get()
            pause = due - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
            if chunk is None:
                break
            writer.write(chunk)
            await writer.drain()
            in_flight -= len(chunk)
            if in_flight < WINDOW:
                room.set()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    delivering = asyncio.ensure_future(deliver())
    try:
        while True:
            await room.wait()
            chunk = await reader.read(65536)
            queue.put_nowait((loop.time() + one_way, chunk or None))
            if not chunk:
                break
            in_flight += len(chunk)
            if in_flight >= WINDOW:
                room.clear()
    except (ConnectionError, OSError):
        queue.put_nowait((loop.time(), None))
    try:
        await delivering
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer):
    await asyncio.sleep(rtt)  # the handshake's round trip
    try:
        server_reader, server_writer = await asyncio.open_connection('127.0.0.1', target)
    except OSError:
        client_writer.close()
        return
    # When either side is done (a client that hangs up mid-response, a server that closes), both
    # connections end: the server stops sending what nobody will read, as it would without the proxy.
    pipes = [asyncio.ensure_future(pipe(client_reader, server_writer, rtt / 2)),
             asyncio.ensure_future(pipe(server_reader, client_writer, rtt / 2))]
    await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
    for writer in (client_writer, server_writer):
        writer.transport.abort()
    for task in pipes:
        task.cancel()
    await asyncio.gather(*pipes, return_exceptions=True)


async def main():
    server = await asyncio.start_server(handle, '127.0.0.1', port)
    print(f"Delaying on 127.0.0.1 port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
