import CFFmpeg

/// Deinterlaces decoded frames before they are scaled: an intra-field ("bob") deinterlacer that keeps the
/// field shown first (top unless the frame says bottom first) and rebuilds every line of the other field
/// as the rounded average of the kept lines above and below it, plane by plane, on a copy (the decoder's
/// frame may be a reference picture and is never written). It works on 8-bit and 16-bit (little-endian)
/// components, planar or packed; other pixel formats (paletted, bitstream, big-endian, float, hardware)
/// pass through unchanged.
///
/// Not motion-adaptive: still areas lose half their vertical detail, in exchange for no combing on
/// motion and no state between frames (seeks, keyframe sampling and loops need none).
package final class FieldDeinterlacer {
    /// Which frames are deinterlaced.
    package enum Selection: Sendable {
        /// Frames the decoder flags as interlaced (`FFmpegCompat.isInterlaced`), and every frame of a stream
        /// that declares a field order.
        case flagged
        /// Every frame.
        case every
    }

    private let selection: Selection
    /// The field displayed first as the stream declares it (`true` top, `false` bottom), `nil` when it
    /// declares none: with one, frames the decoder does not flag are deinterlaced too.
    private let declaredTopFieldFirst: Bool?
    /// The copy the last deinterlaced frame was written to (reused).
    private var copy: DecodedFrame?
    /// Frames deinterlaced so far (tests check it stays 0 on progressive input).
    package private(set) var deinterlacedCount = 0
    /// With ``Selection/flagged`` on a stream that neither flags nor declares interlacing: whether each
    /// of the first ``detectionFrames`` frames looked combed (``PictureCombing``).
    private var combedVotes: [Bool] = []
    /// How many unflagged frames the picture-based detector looks at before its decision is fixed.
    package static let detectionFrames = 3
    /// Above this ``PictureCombing/score(luma:stride:width:height:)`` a frame looks combed.
    package static let combedThreshold = 1.2
    /// Whether the picture-based detector found the stream interlaced (`nil` before it looked).
    package var detectedInterlaced: Bool? {
        combedVotes.isEmpty ? nil : combedVotes.filter { $0 }.count * 2 > combedVotes.count
    }

    package init(selection: Selection, declaredTopFieldFirst: Bool? = nil) {
        self.selection = selection
        self.declaredTopFieldFirst = declaredTopFieldFirst
    }

    /// `frame` itself, or a deinterlaced copy of it (valid until the next call).
    package func prepare(_ decoded: DecodedFrame) throws(FFmpegFailure) -> DecodedFrame {
        let frame = decoded.pointer
        let isFlagged = FFmpegCompat.isInterlaced(frame)
        if selection == .flagged, !isFlagged, declaredTopFieldFirst == nil {
            // Neither the frame nor the stream says interlaced: the pictures decide (the first few frames
            // vote, like ffmpeg's idet; the majority then holds for the rest).
            if combedVotes.count < Self.detectionFrames, let combed = Self.looksCombed(frame) { combedVotes.append(combed) }
            guard detectedInterlaced == true else { return decoded }
        }
        let unsupported = Int32(AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_BE
                                | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_FLOAT)
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)),
              descriptor.pointee.flags & UInt64(unsupported) == 0,
              frame.pointee.height >= 3 else { return decoded }
        let bytesPerComponent = descriptor.pointee.comp.0.depth <= 8 ? 1 : 2
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
        // Rows of the kept field: the frame's first field when it is flagged, else the stream's, else top.
        let keepsEven = isFlagged ? FFmpegCompat.isTopFieldFirst(frame) : declaredTopFieldFirst ?? true
        let format = AVPixelFormat(frame.pointee.format)
        let planes = Int(av_pix_fmt_count_planes(format))
        let height = Int(frame.pointee.height)
        for plane in 0..<max(0, min(planes, 4)) {
            // Chroma planes have ceil(height / 2^log2_chroma_h) rows; luma and alpha the full height.
            let rows = plane == 0 || plane == 3 ? height : -((-height) >> Int(descriptor.pointee.log2_chroma_h))
            let rowBytes = Int(av_image_get_linesize(format, frame.pointee.width, Int32(plane)))
            guard rowBytes > 0, let source = Self.plane(frame, plane), let destination = Self.plane(target, plane) else { continue }
            FieldInterpolation.rebuild(
                from: UnsafePointer(source.pointer), sourceStride: source.stride,
                into: destination.pointer, destinationStride: destination.stride,
                rows: rows, rowBytes: rowBytes, keepsEvenRows: keepsEven, bytesPerComponent: bytesPerComponent)
        }
        FFmpegCompat.clearInterlaced(target)
        deinterlacedCount += 1
        return copy
    }

    /// Whether an 8-bit frame's luma looks combed; `nil` for formats without an 8-bit luma plane.
    private static func looksCombed(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool? {
        let format = AVPixelFormat(frame.pointee.format)
        guard let descriptor = av_pix_fmt_desc_get(format),
              descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL) == 0,
              descriptor.pointee.comp.0.depth == 8, descriptor.pointee.comp.0.step == 1,
              let luma = frame.pointee.data.0, frame.pointee.linesize.0 > 0 else { return nil }
        let score = PictureCombing.score(luma: UnsafePointer(luma), stride: Int(frame.pointee.linesize.0),
                                         width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        return score > combedThreshold
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
package enum FieldInterpolation {
    /// Copies the kept field's rows and rebuilds the other field's rows as the rounded average of the
    /// kept rows above and below (the nearest kept row at the top and bottom edges).
    package static func rebuild(from source: UnsafePointer<UInt8>, sourceStride: Int, into destination: UnsafeMutablePointer<UInt8>,
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

/// The combing measure on an 8-bit luma plane (the same as `Combing.score` on RGB pictures): the energy
/// of the differences between adjacent lines over the energy of the differences between lines two
/// apart. Woven fields of a moving picture score well above 1, progressive pictures about 0.25–0.6.
package enum PictureCombing {
    package static func score(luma: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int) -> Double {
        guard height >= 3, width >= 1 else { return 0 }
        // Every other column is plenty for a decision and halves the work on large pictures.
        let step = width >= 64 ? 2 : 1
        var adjacent = 0, twoApart = 0
        for row in 0..<(height - 2) {
            let a = luma + row * stride, b = a + stride, c = b + stride
            var x = 0
            while x < width {
                let y0 = Int(a[x]), d1 = y0 - Int(b[x]), d2 = y0 - Int(c[x])
                adjacent += d1 * d1
                twoApart += d2 * d2
                x += step
            }
        }
        return twoApart > 0 ? Double(adjacent) / Double(twoApart) : (adjacent > 0 ? .infinity : 0)
    }
}
