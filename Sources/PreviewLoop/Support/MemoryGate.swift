/// Admits work by estimated memory: a reservation waits until it fits beside those held, except that
/// one alone is always admitted (so a clip over the whole budget still runs, by itself).
package final class MemoryGate: @unchecked Sendable {
    private let budget: Int
    private var held = 0
    private var holders = 0
    private let lock = ConditionLock()

    package init(budget: Int) { self.budget = max(1, budget) }

    package func acquire(_ bytes: Int) -> Int {
        lock.lock()
        while holders > 0 && held + bytes > budget { lock.wait() }
        held += bytes
        holders += 1
        lock.unlock()
        return bytes
    }

    package func release(_ bytes: Int) {
        lock.lock()
        held -= bytes
        holders -= 1
        lock.broadcast()
        lock.unlock()
    }
}
