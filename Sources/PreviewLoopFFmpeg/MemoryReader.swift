/// Bytes in memory (a `.data` source), read by FFmpeg through a ``RandomAccessReader`` like any other
/// random-access bytes. Used from the one thread that reads the input.
package final class MemoryBytes: RandomAccessBytes {
    private let bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var byteSize: Int64 { Int64(bytes.count) }
    /// Reading memory is never stopped.
    package var wasStopped: Bool { false }

    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let count = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
        }
        return count
    }
}

extension RandomAccessReader {
    /// A reader over bytes in memory.
    package convenience init(memory bytes: [UInt8]) throws(FFmpegFailure) {
        try self.init(MemoryBytes(bytes))
    }
}
