import PreviewLoop

/// A rendered body, its media type and the headers kept with it (a picture's placeholder; see
/// ``RenderedBody``).
struct CachedBody: Sendable {
    var body: [UInt8]
    var contentType: String
    /// Headers of the entity, sent with every response of it, in order.
    var headers: [(name: String, value: String)] = []

    /// The bytes it holds: the body and its headers.
    var size: Int { body.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } }
}

/// Rendered responses in memory by validator, least recently used evicted first, under a cap in bytes.
///
/// Invariant: the entries, the recency list and `bytes` are touched only under `lock`; `bytes` is the
/// sum of the entries' sizes (bodies and headers) and never above `capacity`.
final class ResponseCache: @unchecked Sendable {
    private final class Node {
        let key: String
        let value: CachedBody
        var newer: Node?
        weak var older: Node?
        init(key: String, value: CachedBody) {
            self.key = key
            self.value = value
        }
    }

    /// The cap in bytes; 0 caches nothing.
    let capacity: Int
    private var entries: [String: Node] = [:]
    /// The least recently used entry, and the most.
    private var oldest: Node?, newest: Node?
    private(set) var bytes = 0
    private let lock = ConditionLock()
    private let metrics: ServerMetrics

    init(capacity: Int, metrics: ServerMetrics) {
        self.capacity = capacity
        self.metrics = metrics
    }

    /// The entry for `key`, now the most recently used.
    func value(for key: String) -> CachedBody? {
        lock.withLock {
            guard let node = entries[key] else { return nil }
            unlink(node)
            append(node)
            return node.value
        }
    }

    /// Stores `value` (a body larger than the whole cap is not kept), evicting the least recently used.
    func insert(_ value: CachedBody, for key: String) {
        guard value.size <= capacity else { return }
        let evicted: Int = lock.withLock {
            if let old = entries.removeValue(forKey: key) {
                unlink(old)
                bytes -= old.value.size
            }
            var evicted = 0
            while bytes + value.size > capacity, let victim = oldest {
                unlink(victim)
                entries[victim.key] = nil
                bytes -= victim.value.size
                evicted += 1
            }
            let node = Node(key: key, value: value)
            entries[key] = node
            append(node)
            bytes += value.size
            return evicted
        }
        metrics.cacheChanged(bytes: lock.withLock { bytes }, evictions: evicted)
    }

    private func unlink(_ node: Node) {
        if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { newest = node.older }
        node.newer = nil
        node.older = nil
    }

    private func append(_ node: Node) {
        node.older = newest
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }
}
