import CFFmpeg

/// Whether decoded pictures are deinterlaced before scaling.
public enum Deinterlacing: String, Sendable, Hashable, CaseIterable {
    /// Frames the decoder flags as interlaced (`AVFrame.interlaced_frame`, set from the stream's coding,
    /// e.g. H.264 field/MBAFF pictures or MPEG-2 without progressive_frame) are deinterlaced; others are
    /// untouched (the default).
    case auto
    /// Every frame is deinterlaced, flagged or not (top field first unless the frame says otherwise).
    case on
    /// No frame is deinterlaced.
    case off
}

/// Deinterlaces decoded frames for ``FrameScaler``: an intra-field ("bob") deinterlacer that keeps the
/// field shown first (top unless the frame says bottom first) and rebuilds every line of the other
/// field as the average of the kept lines above and below it, plane by plane, on a copy (the decoder's
/// frame may be a reference picture and is never written). It works on 8-bit and 16-bit (little-endian)
/// components, planar or packed; other pixel formats pass through unchanged.
///
/// Not motion-adaptive: still areas lose half their vertical detail, in exchange for no combing on
/// motion and no state between frames (seeks, keyframe sampling and loops need none).
final class Deinterlacer {
    let mode: Deinterlacing
    /// The copy the last deinterlaced frame was written to.
    private var copy: DecodedFrame?
    /// Frames deinterlaced so far (tests check it stays 0 on progressive input).
    private(set) var deinterlacedCount = 0

    init(mode: Deinterlacing) {
        self.mode = mode
    }

    /// `frame` itself, or a deinterlaced copy of it (valid until the next call).
    func prepare(_ frame: UnsafeMutablePointer<AVFrame>) throws(PreviewLoopError) -> UnsafeMutablePointer<AVFrame> {
        switch mode {
        case .off: return frame
        case .auto where frame.pointee.interlaced_frame == 0: return frame
        default: break
        }
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)),
              descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_BE
                                                 | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_FLOAT) == 0,
              frame.pointee.height >= 3 else { return frame }
        let depth = Int(descriptor.pointee.comp.0.depth)
        let bytesPerComponent = depth <= 8 ? 1 : 2
        let copy: DecodedFrame
        if let existing = self.copy {
            copy = existing
        } else {
            copy = try DecodedFrame()
            self.copy = copy
        }
        let target = copy.pointer
        av_frame_unref(target)
        target.pointee.format = frame.pointee.format
        target.pointee.width = frame.pointee.width
        target.pointee.height = frame.pointee.height
        try check(av_frame_get_buffer(target, 0), "av_frame_get_buffer", code: .tooLarge, "cannot allocate a deinterlaced frame")
        try check(av_frame_copy_props(target, frame), "av_frame_copy_props", code: .tooLarge, "cannot copy a frame's properties")
        // Rows of the kept field: top (even rows) unless the frame is flagged bottom field first.
        let keepsEven = frame.pointee.interlaced_frame == 0 || frame.pointee.top_field_first != 0
        let planes = Int(av_pix_fmt_count_planes(AVPixelFormat(frame.pointee.format)))
        for plane in 0..<max(0, min(planes, 4)) {
            let rows = plane == 0 || plane == 3 ? Int(frame.pointee.height)
                : -((-Int(frame.pointee.height)) >> Int(descriptor.pointee.log2_chroma_h))
            let rowBytes = Int(av_image_get_linesize(AVPixelFormat(frame.pointee.format), frame.pointee.width, Int32(plane)))
            guard rowBytes > 0, let source = Self.plane(frame, plane), let destination = Self.plane(target, plane) else { continue }
            FieldInterpolation.rebuild(
                from: UnsafePointer(source.pointer), sourceStride: source.stride,
                into: destination.pointer, destinationStride: destination.stride,
                rows: rows, rowBytes: rowBytes, keepsEvenRows: keepsEven, bytesPerComponent: bytesPerComponent)
        }
        target.pointee.interlaced_frame = 0
        deinterlacedCount += 1
        return target
    }

    private static func plane(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> (pointer: UnsafeMutablePointer<UInt8>, stride: Int)? {
        let pointer: UnsafeMutablePointer<UInt8>? = switch index {
        case 0: frame.pointee.data.0
        case 1: frame.pointee.data.1
        case 2: frame.pointee.data.2
        default: frame.pointee.data.3
        }
        let stride: Int32 = switch index {
        case 0: frame.pointee.linesize.0
        case 1: frame.pointee.linesize.1
        case 2: frame.pointee.linesize.2
        default: frame.pointee.linesize.3
        }
        return pointer.map { ($0, Int(stride)) }
    }
}

/// The pure part of the deinterlacer: one plane's rows.
enum FieldInterpolation {
    /// Copies the kept field's rows and rebuilds the other field's rows as the rounded average of the
    /// kept rows above and below (the nearest kept row at the top and bottom edges).
    static func rebuild(from source: UnsafePointer<UInt8>, sourceStride: Int, into destination: UnsafeMutablePointer<UInt8>,
                        destinationStride: Int, rows: Int, rowBytes: Int, keepsEvenRows: Bool, bytesPerComponent: Int) {
        let keptParity = keepsEvenRows ? 0 : 1
        for row in 0..<rows {
            let output = destination + row * destinationStride
            if row % 2 == keptParity || rows < 2 {
                output.update(from: source + row * sourceStride, count: rowBytes)
                continue
            }
            let above = row - 1 >= 0 ? row - 1 : row + 1
            let below = row + 1 < rows ? row + 1 : row - 1
            let a = source + above * sourceStride, b = source + below * sourceStride
            if bytesPerComponent == 1 {
                for index in 0..<rowBytes { output[index] = UInt8((Int(a[index]) + Int(b[index]) + 1) >> 1) }
            } else {
                for index in stride(from: 0, to: rowBytes - 1, by: 2) {
                    let value = (Int(a[index]) | Int(a[index + 1]) << 8) + (Int(b[index]) | Int(b[index + 1]) << 8) + 1
                    output[index] = UInt8(truncatingIfNeeded: value >> 1)
                    output[index + 1] = UInt8(truncatingIfNeeded: value >> 9)
                }
            }
        }
    }
}
