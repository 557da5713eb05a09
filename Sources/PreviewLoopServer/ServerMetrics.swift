import PreviewLoop
import PreviewLoopRemote

/// The server's counters, read by `/metrics` in Prometheus's text exposition format (version 0.0.4).
///
/// Invariant: every field is touched only under `lock`.
final class ServerMetrics: @unchecked Sendable {
    /// A Prometheus histogram: how many observations fell at or below each upper bound (cumulative, as
    /// the format's buckets are), their sum and their count.
    private struct Histogram {
        let bounds: [Double]
        private var counts: [Int]
        private var sum = 0.0
        private var count = 0

        init(bounds: [Double]) {
            self.bounds = bounds
            counts = [Int](repeating: 0, count: bounds.count)
        }

        mutating func observe(_ value: Double) {
            for (index, bound) in bounds.enumerated() where value <= bound { counts[index] += 1 }
            sum += value
            count += 1
        }

        /// The `NAME_bucket{le="…"}` lines, the `+Inf` bucket, `NAME_sum` and `NAME_count`.
        func samples(_ name: String) -> String {
            var text = ""
            for (index, bound) in bounds.enumerated() { text += "\(name)_bucket{le=\"\(bound)\"} \(counts[index])\n" }
            return text + "\(name)_bucket{le=\"+Inf\"} \(count)\n\(name)_sum \(sum)\n\(name)_count \(count)\n"
        }
    }

    private let lock = ConditionLock()
    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }
    private var requests: [RequestKey: Int] = [:]
    /// Request latency, in seconds.
    private var latency = Histogram(bounds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
    private var cacheHits = 0, cacheMisses = 0, cacheBytes = 0, cacheEvictions = 0
    private var diskHits = 0, diskBytes = 0, diskEvictions = 0, diskWriteFailures = 0
    private var sharedHits = 0, sharedMisses = 0, sharedReachable = 0
    private var sharedErrors: [String: Int] = [:], sharedSkipped: [String: Int] = [:], sharedUploads: [String: Int] = [:]
    /// Shared-cache lookup time, in seconds.
    private var lookup = Histogram(bounds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5])
    private var rendersInFlight = 0, queueDepth = 0
    private var coalesced = 0, refusedBusy = 0, timedOut = 0, renders = 0, renderFailures = 0, rendersCancelled = 0

    /// A request answered: its route (`thumbnail.jpg`, `healthz`, `other`), status and seconds taken.
    func requestFinished(route: String, status: Int, seconds: Double) {
        lock.withLock {
            requests[RequestKey(route: route, status: status), default: 0] += 1
            latency.observe(seconds)
        }
    }

    func cacheHit() { lock.withLock { cacheHits += 1 } }
    func cacheMiss() { lock.withLock { cacheMisses += 1 } }
    func cacheChanged(bytes: Int, evictions: Int) { lock.withLock { cacheBytes = bytes; cacheEvictions += evictions } }
    func diskCacheHit() { lock.withLock { diskHits += 1 } }
    func diskCacheChanged(bytes: Int, evictions: Int) { lock.withLock { diskBytes = bytes; diskEvictions += evictions } }
    func diskCacheWriteFailed() { lock.withLock { diskWriteFailures += 1 } }
    func sharedCacheHit() { lock.withLock { sharedHits += 1 } }
    func sharedCacheMiss() { lock.withLock { sharedMisses += 1 } }
    func sharedCacheError(kind: String) { lock.withLock { sharedErrors[kind, default: 0] += 1 } }
    func sharedCacheSkipped(reason: String) { lock.withLock { sharedSkipped[reason, default: 0] += 1 } }
    func sharedCacheUpload(outcome: String) { lock.withLock { sharedUploads[outcome, default: 0] += 1 } }
    func sharedCacheReachable(_ reachable: Bool) { lock.withLock { sharedReachable = reachable ? 1 : 0 } }
    /// A shared-cache lookup that took `seconds` (a hit, a miss or a failure).
    func sharedCacheLookup(seconds: Double) { lock.withLock { lookup.observe(seconds) } }
    func coalescedRequest() { lock.withLock { coalesced += 1 } }
    func refused() { lock.withLock { refusedBusy += 1 } }
    func deadlinePassed() { lock.withLock { timedOut += 1 } }
    func queue(depth: Int, inFlight: Int) { lock.withLock { queueDepth = depth; rendersInFlight = inFlight } }
    func rendered(failed: Bool, cancelled: Bool = false) {
        lock.withLock {
            renders += 1
            if cancelled { rendersCancelled += 1 } else if failed { renderFailures += 1 }
        }
    }

    /// `/metrics`'s body.
    func exposition() -> String {
        lock.withLock {
            var text = ""
            func family(_ name: String, _ type: String, _ help: String) {
                text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            }
            /// One family of one sample each: (name, help, value).
            func unlabelled(_ type: String, _ families: [(String, String, Int)]) {
                for (name, help, value) in families {
                    family(name, type, help)
                    text += "\(name) \(value)\n"
                }
            }
            /// A counter with one sample per value of its one label, in the values' order.
            func labelled(_ name: String, _ help: String, by label: String, _ counts: [String: Int]) {
                family(name, "counter", help)
                for (value, count) in counts.sorted(by: { $0.key < $1.key }) {
                    text += "\(name){\(label)=\"\(value)\"} \(count)\n"
                }
            }
            func histogram(_ name: String, _ help: String, _ values: Histogram) {
                family(name, "histogram", help)
                text += values.samples(name)
            }
            family("previewloop_http_requests_total", "counter", "Requests answered, by route and status.")
            for (key, count) in requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
                text += "previewloop_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
            }
            histogram("previewloop_http_request_duration_seconds", "Time from a request's arrival to its answer.", latency)
            unlabelled("counter", [
                ("previewloop_cache_hits_total", "Responses served from the memory cache.", cacheHits),
                ("previewloop_cache_misses_total", "Responses not in the memory cache (rendered or coalesced).", cacheMisses),
                ("previewloop_cache_evictions_total", "Entries evicted from the memory cache.", cacheEvictions),
                ("previewloop_disk_cache_hits_total", "Responses served from the disk cache (--cache).", diskHits),
                ("previewloop_disk_cache_evictions_total", "Entries this server evicted from the disk cache.", diskEvictions),
                ("previewloop_disk_cache_write_failures_total", "Responses not written to the disk cache (a full disk, say).",
                 diskWriteFailures),
                ("previewloop_shared_cache_hits_total", "Responses served from the shared cache (--cache s3://).", sharedHits),
                ("previewloop_shared_cache_misses_total", "Shared-cache lookups that found no entry.", sharedMisses),
                ("previewloop_coalesced_requests_total", "Requests answered by a render another request started.", coalesced),
                ("previewloop_refused_requests_total", "Requests refused with 503 because the queue was full.", refusedBusy),
                ("previewloop_deadline_exceeded_total", "Requests answered 504 at the request deadline.", timedOut),
                ("previewloop_renders_total", "Renders run.", renders),
                ("previewloop_render_failures_total", "Renders that failed (not counting those cancelled).", renderFailures),
                ("previewloop_renders_cancelled_total", "Renders cancelled because every client waiting for them had gone.",
                 rendersCancelled),
                ("previewloop_source_requests_total", "Range requests sent for remote sources (http(s) and s3:// inputs), retries included.",
                 RangeReader.processRequests.load(ordering: .relaxed)),
                ("previewloop_source_bytes_fetched_total", "Body bytes received for remote sources (http(s) and s3:// inputs).",
                 Int(RangeReader.processBytesReceived.load(ordering: .relaxed))),
            ])
            labelled("previewloop_shared_cache_errors_total",
                     "Shared-cache (--cache s3://) requests that failed, by kind (transport, timeout, refused, not_found, malformed).",
                     by: "kind", sharedErrors)
            labelled("previewloop_shared_cache_skipped_lookups_total",
                     "Shared-cache lookups not made: every lookup thread busy (busy) or the store paused after failures (paused).",
                     by: "reason", sharedSkipped)
            labelled("previewloop_shared_cache_uploads_total",
                     "Rendered responses offered to the shared cache, by outcome (stored, exists, skipped, failed).",
                     by: "outcome", sharedUploads)
            histogram("previewloop_shared_cache_lookup_duration_seconds", "Time a shared-cache lookup took.", lookup)
            unlabelled("gauge", [
                ("previewloop_cache_bytes", "Bytes held by the memory cache.", cacheBytes),
                ("previewloop_disk_cache_bytes", "Bytes in the disk cache as this server last read it.", diskBytes),
                ("previewloop_shared_cache_reachable", "1 when the shared cache answered the last time it was asked, else 0.",
                 sharedReachable),
                ("previewloop_renders_in_flight", "Renders running now.", rendersInFlight),
                ("previewloop_queue_depth", "Renders waiting for a worker.", queueDepth),
            ])
            return text
        }
    }
}

/// Counts every request in ``ServerMetrics`` when its exchange is over: its route (named by `label`
/// from the path), the status sent and the seconds taken.
struct MetricsRecorder: HTTPMiddleware {
    let metrics: ServerMetrics
    let label: @Sendable (String) -> String

    func handle(_ request: HTTPRequest, in exchange: HTTPExchange, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        exchange.onFinish { [metrics, label] exchange, seconds, _ in
            metrics.requestFinished(route: label(exchange.request.path), status: exchange.sentStatus, seconds: seconds)
        }
        return next(request)
    }
}
