import Testing

/// The tags the suites carry, declared once for every test target. Run or skip them by tag with
/// `swift test --filter tag:slow` / `swift test --skip tag:network` (see the README's Tests section).
extension Tag {
    /// The suites that take longest (measured from `swift test`'s per-test durations): skipping them
    /// gives a quick run.
    @Tag package static var slow: Self
    /// Tests that talk to a real HTTP server on 127.0.0.1 (`HTTPTestServer`, `HostileServer`).
    @Tag package static var network: Self
}
