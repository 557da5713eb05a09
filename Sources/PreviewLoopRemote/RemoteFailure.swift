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
    }

    package var kind: Kind
    /// The reason, without the object's name (the caller names it).
    package var reason: String
    /// The store's own error code (`NoSuchKey`), when it gave one.
    package var storeCode: String?

    package init(_ kind: Kind, _ reason: String, storeCode: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.storeCode = storeCode
    }

    package var description: String { reason }
}
