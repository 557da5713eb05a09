import Glibc
import PreviewLoop
import PreviewLoopJobs
import Synchronization

/// `preview-loop serve`: starts a ``PreviewServer``, prints where it listens, serves until SIGTERM or
/// SIGINT, then stops within `--grace` and exits 0.
package enum ServeRun {
    package static func run(_ options: ServeCommand) -> Int32 {
        let server: PreviewServer
        do {
            let log = try AccessLog(path: options.accessLog)
            server = try PreviewServer(options: options, accessLog: log)
        } catch {
            line(2, "Error: serve: \(Format.oneLine(error.message))")
            return 1
        }
        let address = "http://\(options.listen.host):\(server.port)/"
        if options.json {
            let members: [String: JSONValue] = [
                "listening": .string(address), "root": .string(options.root), "port": .integer(server.port),
                "workers": .integer(options.workers), "queue": .integer(options.queue),
            ]
            line(1, JSONValue.object(members).text(.compact))
        } else {
            line(1, "serving \(Format.oneLine(options.root)) on \(address) (\(options.workers) workers, queue \(options.queue))")
        }
        let signalled = Mutex<Int32?>(nil)
        let stop = ConditionLock()
        let watcher = SignalWatcher(signals: [SIGTERM, SIGINT]) { number in
            stop.withLock {
                signalled.withLock { if $0 == nil { $0 = number } }
                stop.broadcast()
            }
        }
        stop.withLock { while signalled.withLock({ $0 }) == nil { stop.wait() } }
        watcher.cancel()
        line(2, "serve: \(SignalWatcher.name(of: signalled.withLock { $0 } ?? SIGTERM)): stopping (up to \(Format.fixed(options.grace, 1)) s for "
            + "\(server.openExchanges) open request(s))")
        server.stop(grace: options.grace)
        return 0
    }

    private static func line(_ descriptor: Int32, _ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
