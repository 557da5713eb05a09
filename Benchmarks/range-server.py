#!/usr/bin/env python3
"""A static file server on 127.0.0.1 that honours byte ranges and counts what it sends.

    range-server.py DIR [--port N] [--no-ranges]

Serves DIR's files (GET and HEAD) over HTTP/1.1 with keep-alive: `Range: bytes=A-B`, `bytes=A-` and
`bytes=-N` are answered with 206 and `Content-Range` (unless --no-ranges: then every GET gets 200 and
the whole file, as a server without ranges does), with a strong ETag and Last-Modified, and `If-Match`
(412 for another tag). Body bytes are counted as they are written, so a client that closes a
connection early (FFmpeg's http protocol after a seek) is counted for what it really received.

    GET /__stats    {"requests": R, "bytes": B, "ranges": ["bytes=0-262143", ...]} since the last reset
    GET /__reset    sets the counters to zero

Prints "Serving HTTP on 127.0.0.1 port N" once listening.
"""
import http.server
import json
import os
import re
import sys
import threading

root = sys.argv[1]
port = int(sys.argv[sys.argv.index('--port') + 1]) if '--port' in sys.argv else 0
ranges_allowed = '--no-ranges' not in sys.argv
lock = threading.Lock()
stats = {'requests': 0, 'bytes': 0, 'ranges': []}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    # As nginx's tcp_nodelay: a response's last short segment is not held back for the client's ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.respond(False)

    def do_GET(self):
        if self.path == '/__stats':
            with lock:
                body = json.dumps(stats).encode()
            return self.send_plain(200, body)
        if self.path == '/__reset':
            with lock:
                stats.update(requests=0, bytes=0, ranges=[])
            return self.send_plain(200, b'{}')
        self.respond(True)

    def send_plain(self, status, body):
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def respond(self, with_body):
        name = os.path.basename(self.path.split('?')[0])
        path = os.path.join(root, name)
        with lock:
            stats['requests'] += 1
            stats['ranges'].append(self.headers.get('Range', '-'))
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        status = os.stat(path)
        size = status.st_size
        etag = '"%x-%x"' % (size, status.st_mtime_ns)
        if self.headers.get('If-Match') not in (None, etag):
            self.send_response(412)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        start, end = 0, size - 1
        asked = self.headers.get('Range', '') if ranges_allowed else ''
        match = re.fullmatch(r'bytes=(\d*)-(\d*)', asked)
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                start = int(match.group(1))
                if match.group(2):
                    end = min(end, int(match.group(2)))
            else:
                start = max(0, size - int(match.group(2)))
            if start > end:
                self.send_response(416)
                self.send_header('Content-Range', 'bytes */%d' % size)
                self.send_header('Content-Length', '0')
                self.end_headers()
                return
            self.send_response(206)
            self.send_header('Content-Range', 'bytes %d-%d/%d' % (start, end, size))
        else:
            self.send_response(200)
        if ranges_allowed:
            self.send_header('Accept-Ranges', 'bytes')
        self.send_header('ETag', etag)
        self.send_header('Last-Modified', self.date_time_string(int(status.st_mtime)))
        self.send_header('Content-Type', 'video/mp4')
        self.send_header('Content-Length', str(end - start + 1))
        self.end_headers()
        if not with_body:
            return
        with open(path, 'rb') as f:
            f.seek(start)
            left = end - start + 1
            try:
                while left > 0:
                    chunk = f.read(min(left, 64 * 1024))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)
                    with lock:
                        stats['bytes'] += len(chunk)
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True


server = http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler)
server.daemon_threads = True
print('Serving HTTP on 127.0.0.1 port %d' % server.server_address[1], flush=True)
server.serve_forever()
