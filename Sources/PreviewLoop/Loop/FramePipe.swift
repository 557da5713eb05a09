/// A bounded, blocking hand-over between two threads: the decoding thread puts, the converting thread
/// takes. Either side can close it; a closed pipe wakes and releases both.
///
/// `@unchecked Sendable`: every stored property is accessed only with `condition` locked, and an item
/// put in is owned by the taker from then on (the putter keeps no reference).
final class FramePipe<Item>: @unchecked Sendable {
    private let condition = ConditionLock()
    private let capacity: Int
    /// A ring of `capacity` slots; a taken slot is emptied at once so the pipe never keeps a frame alive.
    private var slots: [Item?]
    private var head = 0
    private var count = 0
    private var isClosed = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        self.slots = Array(repeating: nil, count: self.capacity)
    }

    /// Puts an item, waiting while the pipe is full.
    ///
    /// - Returns: `false` when the pipe was closed (the item was dropped); the putter should stop.
    func put(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count >= capacity && !isClosed { condition.wait() }
        if isClosed { return false }
        slots[(head + count) % capacity] = item
        count += 1
        condition.broadcast()
        return true
    }

    /// Takes the oldest item, waiting while the pipe is empty; `nil` once the pipe is closed and empty.
    func take() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !isClosed { condition.wait() }
        guard count > 0, let item = slots[head] else { return nil }
        slots[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return item
    }

    /// Closes the pipe: blocked calls return, later puts are refused, remaining items can still be taken
    /// unless `discardingItems`.
    func close(discardingItems: Bool = false) {
        condition.lock()
        isClosed = true
        if discardingItems {
            slots = Array(repeating: nil, count: capacity)
            head = 0
            count = 0
        }
        condition.broadcast()
        condition.unlock()
    }
}
