import Glibc
import Synchronization

/// Reads a remote object in bounded byte ranges (`Range: bytes=A-B`, never open-ended) over one reused
/// connection: a read-ahead window that doubles while reads run forward; after a seek, only what the
/// read asked for (a demuxer asks for a whole packet at once when it is larger than its buffer) plus a
/// small window, so a keyframe seek fetches the packets it decodes and little more; a few recent windows
/// kept for reads that go back; a failed range retried with back-off; the object's version pinned after
/// the first answer (`If-Match` with its strong `ETag`, else `If-Unmodified-Since` with its
/// `Last-Modified`); byte ranges known in advance (a sampler's keyframe packets, from the container's
/// index) fetched ahead on up to four connections at once (``prefetch(_:)``). Counts the bytes and
/// requests it spent. Used from one thread at a time (the parallel part runs inside one call).
package final class RangeReader {
    /// Body bytes received and requests sent by every range reader in this process (a server's
    /// `/metrics`), retries and error bodies included.
    package static let processBytesReceived = Atomic<Int64>(0)
    package static let processRequests = Atomic<Int>(0)

    /// The request for some bytes: URL and header lines, given the `Range` value and the `If-Match`
    /// validator (signed afresh for each request, so a signature's time is always now).
    package typealias RequestMaker = (_ range: String, _ ifMatch: String?) -> (url: String, headers: [String])

    /// The window sizes: the first read (at the object's start), the read-ahead past what a read after a
    /// seek asks for, and the most read ahead at once on a forward run.
    package struct Window: Sendable {
        package var initial: Int
        package var afterSeek: Int
        package var maximum: Int
        package init(initial: Int = 256 << 10, afterSeek: Int = 64 << 10, maximum: Int = 1 << 20) {
            self.initial = initial
            self.afterSeek = afterSeek
            self.maximum = maximum
        }
    }

    private let transfer: HTTPTransfer
    private let makeRequest: RequestMaker
    private let window: Window
    private let retries: Int
    /// Whether to stop now (a deadline or cancellation), polled while a transfer runs and between retries.
    package var shouldStop: () -> Bool = { false }
    /// Recent windows, most recent last: (offset, bytes).
    private var blocks: [(offset: Int64, bytes: [UInt8])] = []
    /// The bytes in ``blocks``, and the most kept.
    private var keptBytes = 0
    private static let keptLimit = 16 << 20
    private var nextWindow: Int
    /// Where the last read ended, to tell a forward run from a seek.
    private var lastEnd: Int64 = -1
    private var validator: String?
    /// The first answer's `Last-Modified`, pinned (`If-Unmodified-Since`) when it gave no strong `ETag`.
    private var lastModified: String?
    /// Whether a `Last-Modified` is pinned when there is no strong `ETag` (http(s) servers; a store always
    /// gives an `ETag`).
    package var pinsLastModified = false
    /// The object's size, known from the first answer.
    package private(set) var size: Int64 = -1
    /// Body bytes received, error bodies included.
    package private(set) var bytesReceived: Int64 = 0
    /// HTTP requests sent, retries included.
    package private(set) var requests = 0
    /// Byte ranges fetched by ``prefetch(_:)`` (each once, however many tries it took).
    package private(set) var prefetchedRanges = 0
    /// The transfers ``prefetch(_:)`` runs at once, each with a connection of its own; made at the first
    /// prefetch that needs them and kept, so later batches reuse their connections.
    private var helpers: [HTTPTransfer] = []

    /// - Parameter pinnedTo: an entity tag the object must still have from the first request on
    ///   (`If-Match`); another version is a ``RemoteFailure/Kind/changed`` failure. Without it, the
    ///   first answer's tag is pinned.
    package init(transfer: HTTPTransfer, window: Window = .init(), retries: Int = 3, pinnedTo entityTag: String? = nil,
                 makeRequest: @escaping RequestMaker) {
        self.transfer = transfer
        validator = entityTag
        self.window = window
        self.retries = retries
        self.makeRequest = makeRequest
        nextWindow = window.initial
    }

    /// Fetches the first window, which also tells the object's size (and refuses a missing or forbidden
    /// object before any demuxer sees it).
    package func open() throws(RemoteFailure) {
        guard size < 0 else { return }
        _ = try fetch(from: 0, count: window.initial)
    }

    /// Copies bytes from `offset` into `buffer`; returns how many (0 at the end of the object).
    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(RemoteFailure) -> Int {
        try open()
        guard offset >= 0, offset < size, buffer.count > 0 else { return 0 }
        if let copied = copy(from: offset, into: buffer) { lastEnd = offset + Int64(copied); return copied }
        // A run forward (a read starting where the last ended, or a short skip ahead) grows the window;
        // anything else is a seek and starts small.
        let count: Int
        if lastEnd >= 0, offset >= lastEnd, offset - lastEnd <= Int64(nextWindow) {
            nextWindow = min(window.maximum, nextWindow * 2)
            count = max(nextWindow, buffer.count)
        } else {
            // A seek: what is asked for (a whole packet when it is larger than the demuxer's buffer), and
            // a small window for the packets after it; a run forward from here grows it again.
            nextWindow = window.afterSeek
            count = buffer.count + window.afterSeek
        }
        _ = try fetch(from: offset, count: count)
        let copied = copy(from: offset, into: buffer) ?? 0
        lastEnd = offset + Int64(copied)
        return copied
    }

    private func copy(from offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        for block in blocks.reversed() where offset >= block.offset && offset < block.offset + Int64(block.bytes.count) {
            let start = Int(offset - block.offset)
            let count = min(buffer.count, block.bytes.count - start)
            block.bytes.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
            }
            return count
        }
        return nil
    }

    /// Fetches `[offset, offset + count)` (cut at the object's end), retrying a failed transfer or a
    /// server error up to `retries` times with back-off (0.1 s, 0.4 s, 1.6 s).
    private func fetch(from offset: Int64, count: Int) throws(RemoteFailure) -> Int {
        let last = size >= 0 ? min(offset + Int64(count), size) - 1 : offset + Int64(count) - 1
        let range = "bytes=\(offset)-\(last)"
        var attempt = 0
        while true {
            if shouldStop() { throw RemoteFailure(.stopped, "stopped") }
            let request = request(range: range)
            let response = transfer.get(url: request.url, headers: request.headers, bodyLimit: Int(last - offset + 1),
                                        shouldStop: shouldStop)
            tally(response)
            if response.wasStopped { throw RemoteFailure(.stopped, "stopped") }
            do {
                return try accept(response, offset: offset, last: last)
            } catch where error.kind == .transport && attempt < retries {
                attempt += 1
                try RemoteFailure.pauseBeforeRetry(attempt, shouldStop: shouldStop)
            }
        }
    }

    /// The request for `range`, pinned to the version read so far.
    private func request(range: String) -> (url: String, headers: [String]) {
        var request = makeRequest(range, validator)
        if validator == nil, let lastModified { request.headers.append("If-Unmodified-Since: \(lastModified)") }
        return request
    }

    private func accept(_ response: HTTPTransfer.Response, offset: Int64, last: Int64) throws(RemoteFailure) -> Int {
        switch response.status {
        case 206:
            // `Content-Range: bytes A-B/TOTAL`
            guard let value = response.headers["content-range"], let slash = value.lastIndex(of: "/"),
                  let total = Int64(value[value.index(after: slash)...]),
                  let dash = value.firstIndex(of: "-"), let first = Int64(value[..<dash].split(separator: " ").last ?? ""),
                  first == offset else {
                throw RemoteFailure(.transport, "the server answered a byte range without a usable Content-Range")
            }
            guard response.failure == nil || Int64(response.body.count) == min(last, total - 1) - offset + 1 else {
                throw RemoteFailure(.transport, "the transfer failed (\(response.failure ?? ""))")
            }
            size = total
            pin(response)
            keep(offset: offset, bytes: response.body)
            return response.body.count
        case 200 where offset == 0:
            // A server that ignores ranges: its first bytes (the transfer was cut at the limit) and its size.
            guard let length = response.headers["content-length"].flatMap({ Int64($0) }) else {
                throw RemoteFailure(.transport, "the server does not take byte ranges and gives no length")
            }
            size = length
            pin(response)
            keep(offset: 0, bytes: response.body)
            return response.body.count
        case 200:
            throw RemoteFailure(.transport, "the server does not take byte ranges")
        case 416 where offset == 0:
            size = 0
            return 0
        case 412:
            throw RemoteFailure(.changed, "the object changed while it was read (its ETag no longer matches)")
        case 0:
            throw RemoteFailure(.transport, "no answer (\(response.failure ?? "no response"))")
        default:
            throw RemoteFailure.answered(status: response.status, body: response.body)
        }
    }

    /// Pins the version the first answer names: its strong `ETag` (a weak one never matches `If-Match`),
    /// else (when ``pinsLastModified``) its `Last-Modified`.
    private func pin(_ response: HTTPTransfer.Response) {
        guard validator == nil, lastModified == nil else { return }
        if let tag = response.headers["etag"], !tag.hasPrefix("W/") {
            validator = tag
        } else if pinsLastModified {
            lastModified = response.headers["last-modified"]
        }
    }

    /// Takes the answer to a first request made by the caller (`Range: bytes=0-(count-1)`, sent to find
    /// where redirects lead) as this reader's own first window, counting it.
    package func adopt(_ response: HTTPTransfer.Response, count: Int) throws(RemoteFailure) {
        tally(response)
        _ = try accept(response, offset: 0, last: Int64(count) - 1)
    }

    /// Counts a request and its body, here and in the process's totals.
    private func tally(_ response: HTTPTransfer.Response) {
        requests += 1
        bytesReceived += Int64(response.body.count)
        Self.processRequests.add(1, ordering: .relaxed)
        Self.processBytesReceived.add(Int64(response.body.count), ordering: .relaxed)
    }

    private func keep(offset: Int64, bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        blocks.append((offset, bytes))
        keptBytes += bytes.count
        // The most recent windows, up to 16 MiB: a sampler that goes back over keyframes it read (a
        // second pass over the same times) finds them here.
        while blocks.count > 1, keptBytes > Self.keptLimit || blocks.count > 256 {
            keptBytes -= blocks.removeFirst().bytes.count
        }
    }
}

extension RangeReader {
    /// Connections a prefetch uses at once.
    package static let prefetchConnections = 4
    /// The most bytes one prefetch fetches: half of what is kept, so that a batch is still kept when the
    /// reads reach it, with room for the windows those reads add.
    package static let prefetchBatchBytes = keptLimit / 2
    /// Ranges this close (a gap of at most 64 KiB) are fetched as one.
    private static let prefetchMergeGap: Int64 = 64 << 10

    /// Fetches byte ranges that reads will ask for soon (`offset`, `count`), up to
    /// ``prefetchConnections`` at once on connections of their own, and keeps them with the windows, so
    /// those reads are served from memory: ranges already kept are skipped, close ones merged, each
    /// fetched range bounded by the window maximum, the batch by ``prefetchBatchBytes``. Each request
    /// is pinned to the version read so far, counted in ``bytesReceived`` and ``requests`` and the
    /// process's totals, and retried with back-off as a read is (a cut-off range, no answer, a server
    /// error). Best effort: a range that still fails, or a stop (``shouldStop``, polled while the
    /// batch runs), is left to the read that wants it, which fails or fetches it then.
    ///
    /// - Returns: how many of `ranges`, from the first, are now fetched or kept (the batch ends at the
    ///   byte limit); ask again from there when the reads reach them.
    @discardableResult
    package func prefetch(_ ranges: [(offset: Int64, count: Int)]) -> Int {
        guard size > 0, !shouldStop() else { return 0 }
        var wanted: [(first: Int64, last: Int64)] = []
        var budget = Self.prefetchBatchBytes
        var taken = 0
        for range in ranges {
            let first = max(0, range.offset), last = min(size, range.offset + Int64(max(0, range.count))) - 1
            if first <= last, !isKept(first: first, last: last) {
                let count = Int(last - first + 1)
                if count > budget, !wanted.isEmpty { break }
                budget -= count
                wanted.append((first, last))
            }
            taken += 1
        }
        guard !wanted.isEmpty else { return taken }
        let pieces = Self.pieces(of: wanted, maximum: Int64(window.maximum))
        let requests = pieces.map { request(range: "bytes=\($0.first)-\($0.last)") }
        let counts = pieces.map { Int($0.last - $0.first + 1) }
        let batch = PrefetchBatch(requests: requests, counts: counts, retries: retries)
        let connections = min(Self.prefetchConnections, pieces.count)
        while helpers.count < connections, pieces.count > 1, let helper = try? transfer.sibling() { helpers.append(helper) }
        var threads: [pthread_t] = []
        if pieces.count > 1 {
            for helper in helpers.prefix(connections) {
                guard let thread = JoinableThread.start({ batch.work(on: helper) { batch.isStopped } }) else { break }
                threads.append(thread)
            }
        }
        if threads.isEmpty {
            // One range, or no thread to spare: fetched here, on the reader's own connection.
            batch.work(on: transfer, shouldStop: shouldStop)
        } else {
            // The threads see only the batch's flag; ``shouldStop`` is asked here, on the reader's thread.
            while batch.finished.load(ordering: .acquiring) < threads.count {
                if shouldStop() { batch.stop() }
                usleep(2_000)
            }
            for thread in threads { pthread_join(thread, nil) }
        }
        for (index, attempts) in batch.outcomes.withLock({ $0 }).enumerated() {
            for response in attempts { tally(response) }
            guard let last = attempts.last, !last.wasStopped else { continue }
            if (try? accept(last, offset: pieces[index].first, last: pieces[index].last)) != nil { prefetchedRanges += 1 }
        }
        return taken
    }

    /// Whether one kept block holds all of `[first, last]`.
    private func isKept(first: Int64, last: Int64) -> Bool {
        blocks.contains { first >= $0.offset && last < $0.offset + Int64($0.bytes.count) }
    }

    /// `ranges` in offset order, merged when close and split into pieces of at most `maximum` bytes.
    private static func pieces(of ranges: [(first: Int64, last: Int64)], maximum: Int64) -> [(first: Int64, last: Int64)] {
        var merged: [(first: Int64, last: Int64)] = []
        for range in ranges.sorted(by: { $0.first < $1.first }) {
            if let previous = merged.last, range.first - previous.last - 1 <= prefetchMergeGap {
                merged[merged.count - 1].last = max(previous.last, range.last)
            } else {
                merged.append(range)
            }
        }
        return merged.flatMap { range in
            stride(from: range.first, through: range.last, by: Int(maximum)).map { ($0, min(range.last, $0 + maximum - 1)) }
        }
    }
}

/// The requests of one prefetch, shared by the threads that run them: each takes the next request,
/// runs it (with retries) on its own transfer, and files the answers under the request's place.
private final class PrefetchBatch: @unchecked Sendable {
    let requests: [(url: String, headers: [String])]
    let counts: [Int]
    let retries: Int
    private let next = Atomic<Int>(0)
    /// Threads that have run out of requests.
    let finished = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// Each request's answers, the last one final (earlier ones were retried).
    let outcomes: Mutex<[[HTTPTransfer.Response]]>

    init(requests: [(url: String, headers: [String])], counts: [Int], retries: Int) {
        self.requests = requests
        self.counts = counts
        self.retries = retries
        outcomes = Mutex(Array(repeating: [], count: requests.count))
    }

    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Runs requests until none is left or `shouldStop` says so.
    func work(on transfer: HTTPTransfer, shouldStop: @escaping () -> Bool) {
        defer { finished.add(1, ordering: .releasing) }
        while !shouldStop() {
            let index = next.add(1, ordering: .relaxed).oldValue
            guard index < requests.count else { return }
            var attempts: [HTTPTransfer.Response] = []
            var attempt = 0
            while true {
                let response = transfer.get(url: requests[index].url, headers: requests[index].headers, bodyLimit: counts[index],
                                            shouldStop: shouldStop)
                attempts.append(response)
                // A range cut off, no answer, or a server error is asked again (as a read's range is).
                let whole = response.status == 206 && response.failure == nil && response.body.count == counts[index]
                let transient = response.status == 0 || response.status == 206 || response.status >= 500
                guard !whole, transient, !response.wasStopped, attempt < retries else { break }
                attempt += 1
                guard (try? RemoteFailure.pauseBeforeRetry(attempt, shouldStop: shouldStop)) != nil else { break }
            }
            outcomes.withLock { $0[index] = attempts }
        }
    }
}
