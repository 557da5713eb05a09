/// SHA-256 (FIPS 180-4), for `serve`'s signed URLs and validators and for AWS Signature Version 4
/// requests: the toolchain on Linux has no CryptoKit and no package can be fetched, and the few lines
/// below are checked against the standard's vectors and Python's `hashlib` in the tests.
package enum SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The 32-byte digest of `message`.
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        var hasher = Hasher()
        hasher.update(message)
        return hasher.finalize()
    }

    /// A digest computed over bytes given in pieces (a file read part by part), equal to ``hash(_:)``
    /// of their concatenation.
    package struct Hasher: Sendable {
        private var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        /// Bytes of an unfinished 64-byte block.
        private var pending: [UInt8] = []
        private var length: UInt64 = 0

        package init() { pending.reserveCapacity(64) }

        /// Adds bytes.
        package mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// Adds bytes.
        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            length &+= UInt64(bytes.count)
            var start = 0
            if !pending.isEmpty {
                let take = min(64 - pending.count, bytes.count)
                pending.append(contentsOf: bytes[0..<take])
                start = take
                guard pending.count == 64 else { return }
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
            while bytes.count - start >= 64 {
                compress(bytes.baseAddress! + start)
                start += 64
            }
            if start < bytes.count { pending.append(contentsOf: bytes[start...]) }
        }

        /// The 32-byte digest of everything added.
        package mutating func finalize() -> [UInt8] {
            let bits = length &* 8
            var tail: [UInt8] = [0x80]
            while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
            for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            let saved = length
            update(tail)
            length = saved
            return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
        }

        /// One 64-byte block into the state (FIPS 180-4, 6.2.2).
        private mutating func compress(_ block: UnsafeRawPointer) {
            @inline(__always) func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value >> count | value << (32 - count) }
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
                for index in 0..<16 {
                    let at = block + index * 4
                    words[index] = UInt32(at.load(as: UInt8.self)) << 24 | UInt32(at.load(fromByteOffset: 1, as: UInt8.self)) << 16
                        | UInt32(at.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt32(at.load(fromByteOffset: 3, as: UInt8.self))
                }
                for index in 16..<64 {
                    let s0 = rotate(words[index - 15], 7) ^ rotate(words[index - 15], 18) ^ (words[index - 15] >> 3)
                    let s1 = rotate(words[index - 2], 17) ^ rotate(words[index - 2], 19) ^ (words[index - 2] >> 10)
                    words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
                roundConstants.withUnsafeBufferPointer { constants in
                    for index in 0..<64 {
                        let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                        let choice = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ choice &+ constants[index] &+ words[index]
                        let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ majority
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                }
                state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
                state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
            }
        }
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key`.
    package static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = hash(block.map { $0 ^ 0x36 } + message)
        return hash(block.map { $0 ^ 0x5c } + inner)
    }

    /// Lowercase hexadecimal.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
