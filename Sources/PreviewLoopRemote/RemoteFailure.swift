import Glibc

/// Why a remote read failed, said in one line that names no secret.
package struct RemoteFailure: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// The store answered that the object or its bucket does not exist.
        case notFound
        /// The store refused the request (credentials, signature, permissions, an expired token).
        case refused
        /// The connection failed, or the server answered outside the protocol.
        case transport
        /// Stopped by the caller (a deadline or cancellation).
        case stopped
        /// The object changed while it was read.
        case changed
        /// A write that asked for a new object found one at its key (`If-None-Match: *`).
        case alreadyExists
        /// A local file to upload could not be read.
        case local
    }

    package var kind: Kind
    /// The reason, without the object's name (the caller names it).
    package var reason: String
    /// The store's own error code (`NoSuchKey`), when it gave one.
    package var storeCode: String?
    /// The HTTP status of the store's answer, when it answered.
    package var status: Int?

    package init(_ kind: Kind, _ reason: String, storeCode: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.storeCode = storeCode
    }

    package var description: String { reason }

    /// The failure a store's answer other than success means: its status, code and message in one line
    /// (the code and message only, never the rest of the body: a `SignatureDoesNotMatch` body repeats
    /// the string to sign).
    package static func answered(status: Int, body: [UInt8]) -> RemoteFailure {
        let store = S3Object.storeError(body: body)
        let kind: Kind = switch status {
        case 404: .notFound
        case 400, 401, 403: .refused
        case 500...599, 408, 429: .transport
        default: .refused
        }
        let reason = store.map { "\($0.code)" + ($0.message.map { ": \($0)" } ?? "") } ?? "HTTP status \(status)"
        var failure = RemoteFailure(kind, "the store answered \(status) \(reason)", storeCode: store?.code)
        failure.status = status
        return failure
    }

    /// Waits before retry number `attempt` (1, 2, 3…): 0.1 s, then four times longer each time, in
    /// 20 ms steps so that `shouldStop` ends the wait at once.
    ///
    /// - Throws: a `.stopped` failure when `shouldStop` turns true.
    static func pauseBeforeRetry(_ attempt: Int, shouldStop: () -> Bool) throws(RemoteFailure) {
        let pause = 0.1 * Double(1 << (2 * (attempt - 1)))
        var waited = 0.0
        while waited < pause {
            if shouldStop() { throw RemoteFailure(.stopped, "stopped") }
            usleep(20_000)
            waited += 0.02
        }
    }
}
