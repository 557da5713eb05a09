import CFFmpeg

/// Owns an `AVFrame`, reused across decodes.
package final class DecodedFrame {
    private let liveToken = LiveObjects.Token()
    package let pointer: UnsafeMutablePointer<AVFrame>

    package init() throws(FFmpegFailure) {
        guard let frame = av_frame_alloc() else { throw FFmpegFailure(.tooLarge, "out of memory allocating a frame") }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }
}

extension DecodedFrame {
    /// A frame owning new, writable planes for a `width` x `height` picture in `format`.
    package convenience init(width: Int, height: Int, format: AVPixelFormat) throws(FFmpegFailure) {
        try self.init()
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = format.rawValue
        try check(av_frame_get_buffer(pointer, 0), "av_frame_get_buffer", code: .tooLarge,
                  "cannot allocate a \(width)x\(height) picture")
    }

    /// Makes the planes writable again before they are filled: the encoder may still hold a reference
    /// to the previous picture (x264's lookahead), which a new one must not overwrite.
    package func makeWritable() throws(FFmpegFailure) {
        try check(av_frame_make_writable(pointer), "av_frame_make_writable", code: .tooLarge, "cannot reuse a picture")
    }
}
