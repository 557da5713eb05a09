import CFFmpeg

/// Owns an `AVFrame`, reused across decodes.
package final class DecodedFrame {
    private let liveToken = LiveObjects.Token()
    let pointer: UnsafeMutablePointer<AVFrame>
    /// The picture the decoder produced just before this one since its last seek (a reference to the
    /// same buffers, itself without a predecessor), kept only where the deinterlacer can use it as
    /// evidence of motion; `nil` otherwise.
    package var predecessor: DecodedFrame?

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
    package convenience init(width: Int, height: Int, layout: PixelLayout) throws(FFmpegFailure) {
        try self.init()
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = layout.format.rawValue
        try check(av_frame_get_buffer(pointer, 0), "av_frame_get_buffer", code: .tooLarge,
                  "cannot allocate a \(width)x\(height) picture")
    }

    /// A new reference to `other`'s picture and properties (no pixels are copied).
    package convenience init(referencing other: DecodedFrame) throws(FFmpegFailure) {
        try self.init()
        try check(av_frame_ref(pointer, other.pointer), "av_frame_ref", code: .tooLarge, "cannot reference a decoded picture")
    }

    /// Makes the planes writable again before they are filled: the encoder may still hold a reference
    /// to the previous picture (x264's lookahead), which a new one must not overwrite.
    package func makeWritable() throws(FFmpegFailure) {
        try check(av_frame_make_writable(pointer), "av_frame_make_writable", code: .tooLarge, "cannot reuse a picture")
    }
}

extension DecodedFrame {
    /// The picture's width in pixels (0 before anything is decoded).
    package var width: Int { Int(pointer.pointee.width) }
    /// The picture's height in pixels.
    package var height: Int { Int(pointer.pointee.height) }
    /// The frame's sample aspect ratio (0/1 when unset).
    package var sampleAspectRatio: (numerator: Int, denominator: Int) {
        (Int(pointer.pointee.sample_aspect_ratio.num), Int(pointer.pointee.sample_aspect_ratio.den))
    }
    /// FFmpeg's best guess of the presentation timestamp in stream ticks, `nil` when it has none.
    package var bestEffortTimestamp: Int64? {
        pointer.pointee.best_effort_timestamp == cffmpeg_nopts_value() ? nil : pointer.pointee.best_effort_timestamp
    }
    /// How long the frame is shown, in stream ticks; 0 when unknown.
    package var duration: Int64 { FFmpegCompat.duration(of: pointer) }
    /// Whether the decoder marked the frame a keyframe.
    package var isKeyframe: Bool { FFmpegCompat.isKeyframe(pointer) }

    /// The frame's 8-bit luma plane, when its pixel format has one (8-bit planar or semi-planar YUV, or
    /// grey): `body` gets the plane, its bytes per row, and whether its samples are limited range.
    /// `nil` for any other format.
    package func withEightBitLuma<Result>(_ body: (UnsafePointer<UInt8>, Int, Bool) -> Result) -> Result? {
        let frame = pointer.pointee
        let format = AVPixelFormat(rawValue: frame.format)
        let eightBitLuma: [AVPixelFormat] = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P,
                                             AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P,
                                             AV_PIX_FMT_NV12, AV_PIX_FMT_NV21, AV_PIX_FMT_GRAY8]
        guard eightBitLuma.contains(format), let plane = frame.data.0, frame.linesize.0 > 0 else { return nil }
        let jpeg = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(format)
            || frame.color_range == AVCOL_RANGE_JPEG
        return body(UnsafePointer(plane), Int(frame.linesize.0), !jpeg && format != AV_PIX_FMT_GRAY8)
    }
}
