import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP server on 127.0.0.1 serving a directory, run as a `python3` child process for the
/// length of one test: start it, read `url(for:)`, and call `stop()` (terminate and wait) at the end.
///
/// Two flavours: `.byteRanges` answers `Range` requests with `206 Partial Content` and advertises
/// `Accept-Ranges: bytes` (like nginx or a CDN), so FFmpeg can seek; `.plain` is Python's own
/// `http.server`, which ignores `Range` and always sends the whole file (FFmpeg then sees an input it
/// can only read forward).
package final class HTTPTestServer {
    /// Whether the server honours byte ranges.
    package enum Flavour { case byteRanges, plain }

    private let process: Process
    /// The port the server listens on (chosen by the OS: the server binds port 0).
    package let port: Int

    /// Starts the server and waits (up to 10 s) until it prints its port.
    ///
    /// - Parameter redirects: names (the request path's last component) answered with `302 Found` and
    ///   this `Location` instead of a file (`.byteRanges` only); the value `!drop` serves the file but cuts
    ///   every other response to it off halfway, closing the connection (a store that drops a connection
    ///   mid-range).
    /// - Parameter requestLog: a file to which the `.byteRanges` server appends one line per request,
    ///   `NAME PORT BUSY RANGE` (the client's port, one per connection; how many requests are being
    ///   answered, this one included; the `Range` header as sent, `-` without one), before it answers.
    /// - Parameter answerDelay: seconds the `.byteRanges` server waits before answering each request
    ///   (a slow link), so that requests sent at once are seen at once.
    package init(directory: String, flavour: Flavour = .byteRanges, redirects: [String: String] = [:], requestLog: String? = nil,
                 answerDelay: Double = 0) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        switch flavour {
        case .byteRanges:
            process.arguments = ["-u", "-c", Self.unblockSignals + "\n" + Self.rangeServerScript, directory]
                + redirects.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + (requestLog.map { ["!log=\($0)"] } ?? []) + ["!delay=\(answerDelay)"]
        case .plain:
            // `python3 -m http.server 0 --bind 127.0.0.1 --directory DIR`, after unblocking the signals.
            process.arguments = ["-u", "-c", Self.unblockSignals + "import runpy; runpy.run_module('http.server', run_name='__main__')",
                                 "0", "--bind", "127.0.0.1", "--directory", directory]
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        // "Serving HTTP on 127.0.0.1 port 46517 (http://127.0.0.1:46517/) ..."
        while found == nil, Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }    // the server exited
            text += String(decoding: data, as: UTF8.self)
            if let range = text.range(of: #"port [0-9]+"#, options: .regularExpression) {
                found = Int(text[range].dropFirst(5))
            }
        }
        guard let found else {
            process.terminate()
            process.waitUntilExit()
            throw OracleError(message: "the HTTP test server did not start: \(text)")
        }
        port = found
    }

    /// `http://127.0.0.1:PORT/<name>`.
    package func url(for name: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(name)")!
    }

    /// Stops the server (SIGTERM, then SIGKILL after 2 s) and waits for it to exit.
    package func stop() {
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Python that unblocks SIGTERM and SIGINT. A child started by `Process` from a Swift Testing
    /// worker thread inherits that thread's signal mask, in which both are blocked: `terminate()`
    /// alone would leave the server running and `waitUntilExit()` waiting for ever.
    private static let unblockSignals = "import signal; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT}); "

    /// A TCP port on 127.0.0.1 with nothing listening: bound by the OS, then released.
    package static func unusedPort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(descriptor >= 0, "socket() failed")
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        precondition(bound, "bind() failed")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A minimal static file server with single byte-range support (`bytes=A-B`, `bytes=A-`), a strong
    /// `ETag` (size and modification time) with `Last-Modified`, and `If-Match` (412 for another tag).
    private static let rangeServerScript = #"""
import http.server, os, re, socket, sys, threading, time
root = sys.argv[1]
busy, busy_lock = [0], threading.Lock()
redirects = dict(argument.split('=', 1) for argument in sys.argv[2:])
request_log = redirects.pop('!log', None)
delay = float(redirects.pop('!delay', '0'))
answered = {}
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *args): pass
    def do_HEAD(self): self.respond(False)
    def do_GET(self): self.respond(True)
    def respond(self, with_body):
        with busy_lock: busy[0] += 1
        try: self.answer(with_body)
        finally:
            with busy_lock: busy[0] -= 1
    def answer(self, with_body):
        name = os.path.basename(self.path.split('?')[0])
        if request_log:
            with busy_lock: now = busy[0]
            with open(request_log, 'a') as log:
                log.write('%s %d %d %s\n' % (name, self.client_address[1], now, self.headers.get('Range', '-')))
        if delay > 0: time.sleep(delay)
        dropping = redirects.get(name) == '!drop'
        if name in redirects and not dropping:
            self.send_response(302); self.send_header('Location', redirects[name])
            self.send_header('Content-Length', '0'); self.end_headers(); return
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            self.send_response(404); self.send_header('Content-Length', '0'); self.end_headers(); return
        with open(path, 'rb') as f: data = f.read()
        status = os.stat(path)
        etag = '"%x-%x"' % (len(data), status.st_mtime_ns)
        if self.headers.get('If-Match') not in (None, etag):
            self.send_response(412); self.send_header('Content-Length', '0'); self.end_headers(); return
        start, end = 0, len(data) - 1
        match = re.fullmatch(r'bytes=(\d+)-(\d*)', self.headers.get('Range', ''))
        if match:
            start = int(match.group(1))
            if match.group(2): end = min(end, int(match.group(2)))
            if start > end:
                self.send_response(416); self.send_header('Content-Range', 'bytes */%d' % len(data))
                self.send_header('Content-Length', '0'); self.end_headers(); return
            self.send_response(206); self.send_header('Content-Range', 'bytes %d-%d/%d' % (start, end, len(data)))
        else:
            self.send_response(200)
        self.send_header('Accept-Ranges', 'bytes')
        self.send_header('ETag', etag)
        self.send_header('Last-Modified', self.date_time_string(int(status.st_mtime)))
        self.send_header('Content-Type', 'application/octet-stream')
        self.send_header('Content-Length', str(end - start + 1))
        self.end_headers()
        if with_body:
            body = data[start:end + 1]
            answered[name] = answered.get(name, 0) + 1
            try:
                if dropping and answered[name] % 2 == 1 and len(body) > 1:
                    self.wfile.write(body[:len(body) // 2]); self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError, OSError): pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
server.daemon_threads = True
print('Serving HTTP on 127.0.0.1 port %d' % server.server_address[1], flush=True)
server.serve_forever()
"""#
}
