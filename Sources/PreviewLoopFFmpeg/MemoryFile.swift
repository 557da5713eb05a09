import CFFmpeg
import Glibc

/// A file in memory that a muxer writes, seeks in and reads back as it would a file on disk: one
/// growing byte buffer, at most ``limit`` bytes long. MP4's `+faststart` needs all three: the muxer
/// seeks back to patch sizes, and in its trailer it opens the output a second time for reading
/// (`AVFormatContext.io_open`) to move the media data up behind the index. A `avio_open_dyn_buf`
/// buffer cannot be opened twice; this one gives every opening its own position (``MemoryCursor``).
///
/// Used from the one thread that runs its muxer.
final class MemoryFile {
    /// The file's bytes so far.
    var bytes: [UInt8] = []
    /// The most bytes the file may reach; a write past it fails, and ``isOverLimit`` says why.
    var limit: Int
    /// Whether a write was refused for going past ``limit``.
    private(set) var isOverLimit = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Writes `count` bytes at `position`, growing the file (with zeros over any gap a seek left, as a
    /// file on disk reads); `false` when the file would pass ``limit``, or memory ran out.
    func write(_ source: UnsafePointer<UInt8>, count: Int, at position: Int) -> Bool {
        let end = position + count
        guard end <= limit else {
            isOverLimit = true
            return false
        }
        if position == bytes.count {
            bytes.append(contentsOf: UnsafeBufferPointer(start: source, count: count))
            return true
        }
        if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
        bytes.withUnsafeMutableBufferPointer { buffer in
            (buffer.baseAddress! + position).update(from: source, count: count)
        }
        return true
    }

    /// Copies up to `count` bytes from `position` into `destination`; how many (0 at the end).
    func read(into destination: UnsafeMutablePointer<UInt8>, count: Int, at position: Int) -> Int {
        let available = min(count, max(0, bytes.count - position))
        guard available > 0 else { return 0 }
        bytes.withUnsafeBufferPointer { buffer in
            destination.update(from: buffer.baseAddress! + position, count: available)
        }
        return available
    }

    /// Hands the bytes over, leaving the file empty. The buffer grew by doubling, so up to half of it
    /// may be spare: the bytes are then copied into one of their own size, so that a cache keeping
    /// them holds what it counts.
    func takeBytes() -> [UInt8] {
        defer { bytes = [] }
        guard bytes.capacity - bytes.count > bytes.count / 8 else { return bytes }
        return [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = bytes.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }
}

/// One opening of a ``MemoryFile`` with its own position: the muxer's output, or the reading one
/// `io_open` gives its trailer. An `AVIOContext` made by ``makeContext(writable:)`` keeps it alive
/// until ``freeContext(_:)``.
final class MemoryCursor {
    let file: MemoryFile
    var position = 0

    init(file: MemoryFile) {
        self.file = file
    }

    /// The size of the AVIOContext's own buffer: what `avio_open` gives a file (`IO_BUFFER_SIZE`).
    static let bufferSize: Int32 = 32768

    /// A new seekable `AVIOContext` over this cursor (reading, and writing when `writable`); `nil`
    /// when out of memory. Free it with ``freeContext(_:)``.
    func makeContext(writable: Bool) -> UnsafeMutablePointer<AVIOContext>? {
        guard let buffer = av_malloc(Int(Self.bufferSize)) else { return nil }
        let opaque = Unmanaged.passRetained(self).toOpaque()
        let context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Self.bufferSize, writable ? 1 : 0, opaque,
                                         { opaque, destination, count in
                                             guard let opaque, let destination, count > 0 else { return 0 }
                                             let cursor = Unmanaged<MemoryCursor>.fromOpaque(opaque).takeUnretainedValue()
                                             let read = cursor.file.read(into: destination, count: Int(count), at: cursor.position)
                                             guard read > 0 else { return FFmpegError.endOfFile }
                                             cursor.position += read
                                             return Int32(read)
                                         },
                                         writable ? { opaque, source, count in
                                             guard let opaque, let source, count >= 0 else { return cffmpeg_averror(EINVAL) }
                                             let cursor = Unmanaged<MemoryCursor>.fromOpaque(opaque).takeUnretainedValue()
                                             guard cursor.file.write(source, count: Int(count), at: cursor.position) else {
                                                 return cffmpeg_averror(cursor.file.isOverLimit ? EFBIG : ENOMEM)
                                             }
                                             cursor.position += Int(count)
                                             return count
                                         } : nil,
                                         { opaque, offset, whence in
                                             guard let opaque else { return Int64(cffmpeg_averror(EINVAL)) }
                                             let cursor = Unmanaged<MemoryCursor>.fromOpaque(opaque).takeUnretainedValue()
                                             let size = Int64(cursor.file.bytes.count)
                                             let target: Int64
                                             switch whence & ~AVSEEK_FORCE {
                                             case AVSEEK_SIZE: return size
                                             case SEEK_SET: target = offset
                                             case SEEK_CUR: target = Int64(cursor.position) + offset
                                             case SEEK_END: target = size + offset
                                             default: return Int64(cffmpeg_averror(EINVAL))
                                             }
                                             guard target >= 0 else { return Int64(cffmpeg_averror(EINVAL)) }
                                             cursor.position = Int(target)
                                             return target
                                         })
        guard let context else {
            Unmanaged<MemoryCursor>.fromOpaque(opaque).release()
            av_free(buffer)
            return nil
        }
        return context
    }

    /// Frees a context ``makeContext(writable:)`` made (and the buffer FFmpeg may have replaced), and
    /// lets go of its cursor.
    static func freeContext(_ context: UnsafeMutablePointer<AVIOContext>) {
        var context: UnsafeMutablePointer<AVIOContext>? = context
        if let opaque = context?.pointee.opaque { Unmanaged<MemoryCursor>.fromOpaque(opaque).release() }
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
    }

    /// `AVFormatContext.io_open` for a muxer writing a ``MemoryFile`` (its `opaque`): a new reading
    /// cursor from the start of the file, whatever the URL; writing a second file is refused.
    static let openForReading: @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                               UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32 = { format, pb, _, flags, _ in
        guard let format, let pb, let opaque = format.pointee.opaque else { return cffmpeg_averror(EINVAL) }
        guard flags & AVIO_FLAG_WRITE == 0 else { return cffmpeg_averror(ENOSYS) }
        let file = Unmanaged<MemoryFile>.fromOpaque(opaque).takeUnretainedValue()
        guard let context = MemoryCursor(file: file).makeContext(writable: false) else { return cffmpeg_averror(ENOMEM) }
        pb.pointee = context
        return 0
    }

    /// `AVFormatContext.io_close2` for what ``openForReading`` opened.
    static let close: @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32 = { _, pb in
        if let pb { freeContext(pb) }
        return 0
    }
}
