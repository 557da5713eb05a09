import CFFmpeg

/// Deinterlaces decoded frames before they are scaled: a motion-adaptive deinterlacer that keeps the
/// field shown first (top unless the frame says bottom first) and, for every sample of the other
/// field, either keeps it (woven: full vertical detail where nothing moves) or rebuilds it from the
/// kept rows around it (interpolated: no combing where something moves), plane by plane, on a copy
/// (the decoder's frame may be a reference picture and is never written). ``FieldInterpolation``
/// describes the decision. It works on 8-bit and 16-bit (little-endian) components, planar or packed;
/// other pixel formats (paletted, bitstream, big-endian, float, hardware) pass through unchanged.
///
/// The motion evidence is temporal when the stream's previous frame is at hand: the decoder's
/// ``DecodedFrame/predecessor`` (what it decoded just before this frame since its last seek), else the
/// last frame this deinterlacer took. Either is used only when it is the picture shown immediately
/// before (same size, format and field order, and its timestamp plus its duration give this frame's
/// timestamp), so a seek, a keyframe sample, a skipped frame or a loop's wrap falls back to the frame
/// alone, never to a stale picture. Nothing is delayed: each frame comes out as it goes in.
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
    /// The stream's nominal frame duration in its time base, for frames that carry none (0: unknown).
    private let nominalDuration: Int64
    /// The copy the last deinterlaced frame was written to (reused).
    private var copy: DecodedFrame?
    /// A reference to the last frame deinterlaced (the decoder's picture, not the copy) and the field it
    /// kept, for the next frame's temporal evidence when the decoder gives none.
    private var history: (frame: DecodedFrame, keepsEven: Bool)?
    /// Frames deinterlaced so far (tests check it stays 0 on progressive input).
    package private(set) var deinterlacedCount = 0
    /// Of those, the frames deinterlaced with the previous frame's evidence (the rest from the frame alone).
    package private(set) var temporalCount = 0
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

    /// - Parameter nominalDuration: the stream's frame duration in its time base (0 when unknown), used
    ///   to tell whether a previous frame is the one shown immediately before when it carries no duration.
    package init(selection: Selection, declaredTopFieldFirst: Bool? = nil, nominalDuration: Int64 = 0) {
        self.selection = selection
        self.declaredTopFieldFirst = declaredTopFieldFirst
        self.nominalDuration = nominalDuration
    }

    /// Whether ``prepare(_:)`` may deinterlace `frame` with `selection` on a stream declaring
    /// `declaredTopFieldFirst` without looking at its picture (the decoder keeps predecessors for these).
    package static func isInterlaced(_ frame: DecodedFrame, selection: Selection, declaredTopFieldFirst: Bool?) -> Bool {
        selection == .every || declaredTopFieldFirst != nil || FFmpegCompat.isInterlaced(frame.pointer)
    }

    /// Forgets the last frame taken (its evidence is not used for the next one); the timestamp check
    /// already refuses a frame that is not the next one's predecessor, this also lets its picture go.
    package func forgetHistory() {
        history = nil
    }

    /// `frame` itself, or a deinterlaced copy of it (valid until the next call).
    package func prepare(_ decoded: DecodedFrame) throws(FFmpegFailure) -> DecodedFrame {
        let frame = decoded.pointer
        let isFlagged = FFmpegCompat.isInterlaced(frame)
        if selection == .flagged, !isFlagged, declaredTopFieldFirst == nil {
            // Neither the frame nor the stream says interlaced: the pictures decide (the first few frames
            // vote, like ffmpeg's idet; the majority then holds for the rest).
            if combedVotes.count < Self.detectionFrames, let combed = Self.looksCombed(frame) { combedVotes.append(combed) }
            guard detectedInterlaced == true else {
                history = nil
                return decoded
            }
        }
        let unsupported = Int32(AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_BE
                                | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_FLOAT)
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)),
              descriptor.pointee.flags & UInt64(unsupported) == 0,
              frame.pointee.height >= 3 else {
            history = nil
            return decoded
        }
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
        // The previous picture as evidence: the decoder's, else the last one taken here, if it is the one
        // shown immediately before with the same field kept.
        var previous: DecodedFrame?
        if let candidate = decoded.predecessor, keptEvenRows(of: candidate) == keepsEven, isImmediatelyBefore(candidate.pointer, frame) {
            previous = candidate
        } else if let history, history.keepsEven == keepsEven, isImmediatelyBefore(history.frame.pointer, frame) {
            previous = history.frame
        }
        let format = AVPixelFormat(frame.pointee.format)
        let planes = Int(av_pix_fmt_count_planes(format))
        let height = Int(frame.pointee.height)
        let significantBits = Int(descriptor.pointee.comp.0.depth) + Int(descriptor.pointee.comp.0.shift)
        for plane in 0..<max(0, min(planes, 4)) {
            // Chroma planes have ceil(height / 2^log2_chroma_h) rows; luma and alpha the full height.
            let rows = plane == 0 || plane == 3 ? height : -((-height) >> Int(descriptor.pointee.log2_chroma_h))
            let rowBytes = Int(av_image_get_linesize(format, frame.pointee.width, Int32(plane)))
            guard rowBytes > 0, let source = Self.plane(frame, plane), let destination = Self.plane(target, plane) else { continue }
            let earlier = previous.flatMap { Self.plane($0.pointer, plane) }
            let layout = FieldInterpolation.Layout(rows: rows, rowBytes: rowBytes, keepsEvenRows: keepsEven,
                                                   bytesPerComponent: bytesPerComponent,
                                                   step: Self.sampleStep(descriptor, plane: plane, bytesPerComponent: bytesPerComponent),
                                                   significantBits: significantBits)
            FieldInterpolation.rebuild(current: .init(base: UnsafePointer(source.pointer), stride: source.stride),
                                       previous: earlier.map { .init(base: UnsafePointer($0.pointer), stride: $0.stride) },
                                       into: destination.pointer, destinationStride: destination.stride, layout: layout)
        }
        FFmpegCompat.clearInterlaced(target)
        deinterlacedCount += 1
        if previous != nil { temporalCount += 1 }
        // This frame is the next one's evidence (a reference to the decoder's picture: no copy).
        let kept: DecodedFrame
        if let history { kept = history.frame } else { kept = try DecodedFrame() }
        av_frame_unref(kept.pointer)
        history = nil
        if av_frame_ref(kept.pointer, frame) >= 0 { history = (kept, keepsEven) }
        return copy
    }

    /// The kept field of `frame` as ``prepare(_:)`` chooses it.
    private func keptEvenRows(of frame: DecodedFrame) -> Bool {
        FFmpegCompat.isInterlaced(frame.pointer) ? FFmpegCompat.isTopFieldFirst(frame.pointer) : declaredTopFieldFirst ?? true
    }

    /// Whether `earlier` is the picture shown immediately before `frame`: same size and format, and its
    /// timestamp plus its duration (or the stream's nominal one) is `frame`'s, within half a duration.
    private func isImmediatelyBefore(_ earlier: UnsafeMutablePointer<AVFrame>, _ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let none = cffmpeg_nopts_value()
        guard earlier.pointee.format == frame.pointee.format, earlier.pointee.width == frame.pointee.width,
              earlier.pointee.height == frame.pointee.height,
              earlier.pointee.best_effort_timestamp != none, frame.pointee.best_effort_timestamp != none else { return false }
        let duration = FFmpegCompat.duration(of: earlier)
        let expected = duration > 0 ? duration : nominalDuration
        let gap = frame.pointee.best_effort_timestamp &- earlier.pointee.best_effort_timestamp
        return expected > 0 && gap > 0 && abs(gap - expected) * 2 < expected
    }

    /// Samples between horizontally adjacent samples of one component on `plane` (see
    /// ``FieldInterpolation/Layout/step``): the components' common step, 0 when they differ.
    private static func sampleStep(_ descriptor: UnsafePointer<AVPixFmtDescriptor>, plane: Int, bytesPerComponent: Int) -> Int {
        let components = [descriptor.pointee.comp.0, descriptor.pointee.comp.1, descriptor.pointee.comp.2, descriptor.pointee.comp.3]
            .prefix(Int(descriptor.pointee.nb_components))
            .filter { Int($0.plane) == plane }
        guard let first = components.first, components.allSatisfy({ $0.step == first.step }), first.step > 0 else { return 0 }
        return Int(first.step) / bytesPerComponent
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

/// The combing measure on an 8-bit luma plane (the same as `Combing.score` on RGB pictures): the energy
/// of the differences between adjacent lines over the energy of the differences between lines two
/// apart. Woven fields of a moving picture score well above 1, progressive pictures about 0.25–0.6.
package enum PictureCombing {
    package static func score(luma: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int) -> Double {
        guard height >= 3, width >= 1 else { return 0 }
        // A decision needs a sample, not every line: from 720 lines up, every fourth triple of lines
        // (a 4K frame: 540 triples of 3840 samples). Rows are read whole and in order, so the loop runs
        // on vectors; each row's sums fit 32 bits in chunks of 16384 samples (16384 × 255² < 2³¹).
        let rowStep = height >= 720 ? 4 : 1
        let chunk = 16384
        var adjacent = 0, twoApart = 0
        var row = 0
        while row < height - 2 {
            let a = luma + row * stride, b = a + stride, c = b + stride
            var from = 0
            while from < width {
                let to = min(width, from + chunk)
                var rowAdjacent: Int32 = 0, rowTwoApart: Int32 = 0
                for x in from..<to {
                    let y0 = Int32(a[x]), d1 = y0 &- Int32(b[x]), d2 = y0 &- Int32(c[x])
                    rowAdjacent &+= d1 &* d1
                    rowTwoApart &+= d2 &* d2
                }
                adjacent += Int(rowAdjacent)
                twoApart += Int(rowTwoApart)
                from = to
            }
            row += rowStep
        }
        return twoApart > 0 ? Double(adjacent) / Double(twoApart) : (adjacent > 0 ? .infinity : 0)
    }
}
