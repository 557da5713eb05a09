import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A misbehaving HTTP server on 127.0.0.1, run as a `python3` child process for one test: it answers
/// every request the same bad way, prints one `request <line>` per request it receives (so a test can
/// prove a server was never contacted), and stops itself after 60 s even if the test does not.
package final class HostileServer {
    /// How the server misbehaves.
    package enum Behaviour {
        /// Accepts the connection, reads the request, and never answers.
        case silent
        /// Answers `200` with the whole file's `Content-Length`, sends the first `burst` bytes at
        /// once, then one byte a second.
        case trickle(file: String, burst: Int)
        /// Like `trickle`, but after the burst sends nothing more (the connection stays open).
        case hold(file: String, burst: Int)
        /// Answers `404` at once: a witness that only records who called.
        case witness
        /// Answers `200` with the whole file at once: a working server that records who called.
        case serve(file: String)
        /// Reads the request and closes the connection without a byte of answer.
        case hangUp
        /// Answers `200` with the file's first `burst` bytes, then resets the connection (RST), once;
        /// every later request gets the whole file (the network failed once, the server is fine).
        case resetOnce(file: String, burst: Int)
    }

    /// What the reader thread learns from the server's output.
    private final class Log: Sendable {
        let port = Mutex<Int?>(nil)
        let requests = Mutex<[String]>([])
    }

    private let process: Process
    private let log = Log()
    /// The port the server listens on.
    package let port: Int

    /// Starts the server and waits (up to 10 s) until it prints its port.
    package init(_ behaviour: Behaviour) throws {
        let arguments: [String]
        switch behaviour {
        case .silent: arguments = ["silent", "-", "0"]
        case .trickle(let file, let burst): arguments = ["trickle", file, String(burst)]
        case .hold(let file, let burst): arguments = ["hold", file, String(burst)]
        case .witness: arguments = ["witness", "-", "0"]
        case .serve(let file): arguments = ["trickle", file, String(Int32.max)]
        case .hangUp: arguments = ["hangup", "-", "0"]
        case .resetOnce(let file, let burst): arguments = ["reset", file, String(burst)]
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", Self.script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line is the port; every later line a request, collected until the server exits.
        let ported = DispatchSemaphore(value: 0)
        let log = self.log
        let handle = output.fileHandleForReading
        Thread.detachNewThread {
            var pending = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    if line.hasPrefix("port ") {
                        log.port.withLock { $0 = Int(line.dropFirst(5)) }
                        ported.signal()
                    } else if line.hasPrefix("request ") {
                        log.requests.withLock { $0.append(String(line.dropFirst(8))) }
                    }
                }
            }
            ported.signal()
        }
        _ = ported.wait(timeout: .now() + 10)
        guard let port = log.port.withLock({ $0 }) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw OracleError(message: "the hostile test server did not start")
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT/<name>`.
    package func url(for name: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(name)")! }

    /// The request lines received so far (`GET /clip.mp4 HTTP/1.1`).
    package var receivedRequests: [String] { log.requests.withLock { $0 } }

    /// Stops the server (SIGKILL: it holds no state worth a clean exit) and waits for it.
    package func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// The server: one thread per connection, every loop bounded by the 60 s lifetime.
    private static let script = #"""
import signal; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
import socket, struct, sys, threading, time
resets = []
mode, path, burst = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, 'rb').read() if path != '-' else b''
end = time.monotonic() + 60
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(('127.0.0.1', 0))
server.listen(16)
server.settimeout(0.2)
print('port %d' % server.getsockname()[1], flush=True)
def serve(conn):
    try:
        conn.settimeout(5)
        request = b''
        while b'\r\n\r\n' not in request:
            chunk = conn.recv(4096)
            if not chunk: return
            request += chunk
        print('request ' + request.split(b'\r\n')[0].decode(errors='replace'), flush=True)
        if mode == 'witness':
            conn.sendall(b'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
            return
        if mode == 'silent':
            while time.monotonic() < end: time.sleep(0.1)
            return
        if mode == 'hangup':
            return
        if mode == 'reset':
            first = not resets
            resets.append(1)
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n' % len(data))
            if first:
                conn.sendall(data[:burst])
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            else:
                conn.sendall(data)
            return
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n' % len(data))
        conn.sendall(data[:burst])
        for byte in data[burst:]:
            if time.monotonic() >= end: return
            time.sleep(1)
            if mode == 'trickle': conn.sendall(bytes([byte]))
    except OSError:
        pass
    finally:
        conn.close()
while time.monotonic() < end:
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""#
}
