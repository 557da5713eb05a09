import PreviewLoop

/// A rendered body, its media type and the headers that describe it (`Flash-Safety`).
struct CachedBody: Sendable {
    var body: [UInt8]
    var contentType: String
    var headers: [(name: String, value: String)] = []
}

/// Rendered responses in memory by validator, least recently used evicted first, under a cap in bytes.
///
/// Invariant: the entries, the recency list and `bytes` are touched only under `lock`; `bytes` is the
/// sum of the entries' body sizes and never above `capacity`.
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
        guard value.body.count <= capacity else { return }
        let evicted: Int = lock.withLock {
            if let old = entries.removeValue(forKey: key) {
                unlink(old)
                bytes -= old.value.body.count
            }
            var evicted = 0
            while bytes + value.body.count > capacity, let victim = oldest {
                unlink(victim)
                entries[victim.key] = nil
                bytes -= victim.value.body.count
                evicted += 1
            }
            let node = Node(key: key, value: value)
            entries[key] = node
            append(node)
            bytes += value.body.count
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
