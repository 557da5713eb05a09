internal import PreviewLoopFFmpeg

/// Turns decoded frames into upright RGB24 images of a fixed size: crop (aspect-fill), scale, apply the
/// display orientation, place (letterbox for aspect-fit). Reuses its scaler and scratch memory.
final class FrameScaler {
    let outputSize: Size
    let mode: ContentMode
    let orientation: Orientation
    private let scaleContext = ScaleContext()
    /// How HDR frames are turned into SDR (`.none`: converted like SDR).
    let toneMapping: ToneMapping
    /// The peak the stream declares, in cd/m² (MaxCLL, else the mastering display's maximum), replaced by
    /// what the frames' own side data says when they carry it.
    private var declaredPeak: Double?
    private var toneMapper: ToneMapper?
    private var scratch: [UInt8] = []
    private var cachedLayout: (source: Size, sar: Rational, layout: FrameLayout)?
    /// Whether a smart crop's window, once chosen on the first frame, is kept for every later frame of
    /// the same size (a loop, which must not wander) rather than chosen on each frame (stills).
    let holdsSmartCrop: Bool
    /// The window a smart crop chose and holds (with ``holdsSmartCrop``), and what chose it.
    private var heldLayout: (source: Size, sar: Rational, layout: FrameLayout, choice: SmartCropChoice)?
    /// The layout of the last frame converted: where its crop was.
    private(set) var lastLayout: FrameLayout?
    /// With ``ContentMode/smartCrop``: the last frame's window and what placed it; `nil` in other modes.
    private(set) var lastSmartCrop: SmartCropChoice?
    /// Scales the whole picture small for a smart crop to choose its window on; apart from
    /// ``scaleContext`` so neither rebuilds its scaler for every frame.
    private lazy var analysisContext = ScaleContext()
    /// Deinterlaces interlaced frames before they are scaled (see ``Deinterlacing``); `nil` when off.
    let deinterlacer: FieldDeinterlacer?

    /// - Parameters:
    ///   - toneMapping: how PQ and HLG frames become SDR BT.709, after scaling (SDR frames are untouched).
    ///   - declaredPeak: the stream's declared peak in cd/m² (MaxCLL, else the mastering display's maximum).
    ///   - deinterlacing: which frames are deinterlaced before scaling.
    ///   - declaredTopFieldFirst: the stream's declared field order (``VideoInfo/declaredTopFieldFirst``).
    ///   - nominalFrameTicks: the stream's frame duration in its time base (0 when unknown), for the
    ///     deinterlacer's check that a previous frame is the one shown immediately before.
    ///   - holdsSmartCrop: with ``ContentMode/smartCrop``, keep the window chosen on the first frame.
    init(outputSize: Size, mode: ContentMode, orientation: Orientation, toneMapping: ToneMapping = .none,
         declaredPeak: Double? = nil, deinterlacing: Deinterlacing = .off, declaredTopFieldFirst: Bool? = nil,
         nominalFrameTicks: Int64 = 0, holdsSmartCrop: Bool = false) {
        self.holdsSmartCrop = holdsSmartCrop
        self.toneMapping = toneMapping
        self.declaredPeak = declaredPeak
        deinterlacer = switch deinterlacing {
        case .auto: FieldDeinterlacer(selection: .flagged, declaredTopFieldFirst: declaredTopFieldFirst, nominalDuration: nominalFrameTicks)
        case .on: FieldDeinterlacer(selection: .every, declaredTopFieldFirst: declaredTopFieldFirst, nominalDuration: nominalFrameTicks)
        case .off: nil
        }
        self.outputSize = outputSize
        self.mode = mode
        self.orientation = orientation
        if mode == .smartCrop { FaceCascade.readAhead() }
    }

    /// The layout for a decoded picture of `source` size (cached: sizes rarely change mid-stream).
    func layout(source: Size, sampleAspectRatio: Rational) -> FrameLayout {
        if let cachedLayout, cachedLayout.source == source, cachedLayout.sar == sampleAspectRatio {
            return cachedLayout.layout
        }
        let layout = FrameLayout(source: source, sampleAspectRatio: sampleAspectRatio, orientation: orientation,
                                 output: outputSize, mode: mode)
        cachedLayout = (source, sampleAspectRatio, layout)
        return layout
    }

    /// Converts one decoded frame into a new image.
    func image(from frame: DecodedFrame, sampleAspectRatio streamSAR: Rational) throws(PreviewLoopError) -> RGBImage {
        var image = try RGBImage(width: outputSize.width, height: outputSize.height)
        try convert(frame, sampleAspectRatio: streamSAR, into: &image)
        return image
    }

    /// A scaler for `decoder`'s frames: its orientation, tone mapping, declared peak, deinterlacing
    /// and declared field order (every sampler, loop and wall builds its scalers this one way).
    /// `holdsSmartCrop`: a loop's scaler keeps the smart crop's first window; a sampler's chooses one
    /// for each still.
    convenience init(outputSize: Size, mode: ContentMode, for decoder: VideoDecoder, holdsSmartCrop: Bool = false) {
        self.init(outputSize: outputSize, mode: mode, orientation: decoder.info.orientation,
                  toneMapping: decoder.options.toneMapping, declaredPeak: decoder.info.declaredPeakLuminance,
                  deinterlacing: decoder.options.deinterlacing, declaredTopFieldFirst: decoder.info.declaredTopFieldFirst,
                  nominalFrameTicks: decoder.nominalFrameTicks, holdsSmartCrop: holdsSmartCrop)
    }

    /// Converts one decoded frame into `image` (which must have the output size).
    func convert(_ frame: DecodedFrame, sampleAspectRatio streamSAR: Rational, into image: inout RGBImage) throws(PreviewLoopError) {
        let frame = try deinterlaced(frame)
        let source = Size(width: frame.width, height: frame.height)
        guard source.width > 0, source.height > 0 else {
            throw PreviewLoopError(.decodingFailed, "decoded frame has no picture")
        }
        let frameSAR = Rational(frame.sampleAspectRatio.numerator, frame.sampleAspectRatio.denominator)
        let sar = frameSAR.isDefined ? frameSAR : streamSAR
        var layout = layout(source: source, sampleAspectRatio: sar)
        if mode == .smartCrop { layout = try smartLayout(frame, centred: layout, source: source, sampleAspectRatio: sar) }
        lastLayout = layout
        try draw(frame, layout: layout, into: &image, with: scaleContext)
    }

    /// `centred` with its crop placed by ``SmartCrop`` on a small copy of the whole upright picture
    /// (or the held window of an earlier frame of the same size).
    private func smartLayout(_ frame: DecodedFrame, centred: FrameLayout, source: Size,
                             sampleAspectRatio sar: Rational) throws(PreviewLoopError) -> FrameLayout {
        if let heldLayout, heldLayout.source == source, heldLayout.sar == sar {
            lastSmartCrop = heldLayout.choice
            return heldLayout.layout
        }
        let upright = orientation.swapsAxes ? source.transposed : source
        var layout = centred
        var moved = false, faces: Int?
        if centred.uprightCrop.size != upright {
            // The whole picture in square units, upright, as the analysis sees it.
            let ratio = sar.doubleValue ?? 1
            let display = orientation.swapsAxes ? (Double(source.height), Double(source.width) * ratio)
                                                : (Double(source.width) * ratio, Double(source.height))
            let analysisSize = SmartCrop.analysisSize(display: display.0, display.1)
            let analysisLayout = FrameLayout(source: source, sampleAspectRatio: sar, orientation: orientation,
                                             output: analysisSize, mode: .stretch)
            var picture = RGBImage(uncheckedWidth: analysisSize.width, height: analysisSize.height)
            try draw(frame, layout: analysisLayout, into: &picture, with: analysisContext)
            let placement = SmartCrop.placement(for: centred.uprightCrop.size, upright: upright, choosingOn: picture,
                                                faces: { FaceCascade.frontalFace?.faces(in: $0) })
            faces = placement.faces
            if let origin = placement.origin {
                layout = centred.movingCrop(x: origin.x, y: origin.y, source: source)
                moved = true
            }
        }
        let basis: SmartCropChoice.Basis = (faces ?? 0) > 0 ? .faces : moved ? .interest : .centre
        let choice = SmartCropChoice(window: layout.uprightCrop, basis: basis, faces: faces)
        lastSmartCrop = choice
        if holdsSmartCrop { heldLayout = (source, sar, layout, choice) }
        return layout
    }

    /// Scales and turns `frame` as `layout` says into `image` (which has the layout's output size).
    private func draw(_ frame: DecodedFrame, layout: FrameLayout, into image: inout RGBImage,
                      with scaleContext: ScaleContext) throws(PreviewLoopError) {
        let rowBytes = image.bytesPerRow
        if layout.orientation == .up {
            // Scale straight into the output at the placement.
            let offset = layout.placement.y * rowBytes + layout.placement.x * 3
            var failure: PreviewLoopError?
            image.pixels.withUnsafeMutableBufferPointer { pixels in
                do throws(PreviewLoopError) {
                    try scale(frame, crop: layout.sourceCrop, to: layout.scaledSize,
                              destination: pixels.baseAddress! + offset, stride: rowBytes, with: scaleContext)
                } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        let scaled = layout.scaledSize
        let scratchBytes = scaled.width * scaled.height * 3
        if scratch.count < scratchBytes { scratch = [UInt8](repeating: 0, count: scratchBytes) }
        var failure: PreviewLoopError?
        scratch.withUnsafeMutableBufferPointer { buffer in
            do throws(PreviewLoopError) {
                try scale(frame, crop: layout.sourceCrop, to: scaled, destination: buffer.baseAddress!, stride: scaled.width * 3,
                          with: scaleContext)
            } catch { failure = error }
        }
        if let failure { throw failure }
        scratch.withUnsafeBufferPointer { source in
            image.pixels.withUnsafeMutableBufferPointer { destination in
                Self.orient(source.baseAddress!, size: scaled, orientation: layout.orientation,
                            into: destination.baseAddress!, rowBytes: rowBytes, at: layout.placement)
            }
        }
    }

    /// Scales `crop` of `frame` to RGB24 of `size` at `destination`; PQ and HLG frames are tone mapped
    /// (when ``toneMapping`` asks) from the scaler's 16-bit planes.
    private func scale(_ frame: DecodedFrame, crop: Rect, to size: Size, destination: UnsafeMutablePointer<UInt8>,
                       stride: Int, with scaleContext: ScaleContext) throws(PreviewLoopError) {
        let transfer: HDRTransfer? = switch toneMapping == .none ? nil : HDRColor.transfer(of: frame) {
        case .pq?: .pq
        case .hlg?: .hlg
        case nil: nil
        }
        var mapper: ToneMapper?
        if let transfer {
            if let peak = HDRColor.declaredPeak(of: frame) { declaredPeak = peak }
            let convertsGamut = HDRColor.hasWideGamut(frame)
            if toneMapper?.transfer != transfer || toneMapper?.convertsGamut != convertsGamut {
                toneMapper = ToneMapper(transfer: transfer, mode: toneMapping, convertsGamut: convertsGamut)
            }
            mapper = toneMapper
        } else {
            toneMapper = nil
        }
        let nits = declaredPeak ?? ToneCurve.nominalPeak
        let region = PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
        try ffmpeg { () throws(FFmpegFailure) in
            if let mapper {
                try scaleContext.scale(frame, crop: region, width: size.width, height: size.height, destination: destination,
                                       stride: stride) { planes in
                    mapper.map(red: planes.red, green: planes.green, blue: planes.blue, planeStride: planes.planeStride,
                               size: size, declaredNits: nits, into: destination, stride: stride)
                }
            } else {
                try scaleContext.scale(frame, crop: region, width: size.width, height: size.height, destination: destination,
                                       stride: stride)
            }
        }
    }

    /// `frame`, or its deinterlaced copy when the deinterlacer takes it (valid until the next frame).
    private func deinterlaced(_ frame: DecodedFrame) throws(PreviewLoopError) -> DecodedFrame {
        guard let deinterlacer else { return frame }
        return try ffmpeg { () throws(FFmpegFailure) in try deinterlacer.prepare(frame) }
    }

    /// Copies an RGB24 picture of `size` into `destination` at `placement`, turned by `orientation`.
    static func orient(_ source: UnsafePointer<UInt8>, size: Size, orientation: Orientation,
                       into destination: UnsafeMutablePointer<UInt8>, rowBytes: Int, at placement: Rect) {
        let sw = size.width, sh = size.height
        let sourceRow = sw * 3
        for dy in 0..<placement.height {
            let row = destination + (placement.y + dy) * rowBytes + placement.x * 3
            switch orientation {
            case .up:
                row.update(from: source + dy * sourceRow, count: sourceRow)
            case .flipped:
                row.update(from: source + (sh - 1 - dy) * sourceRow, count: sourceRow)
            default:
                for dx in 0..<placement.width {
                    let sx: Int, sy: Int
                    switch orientation {
                    case .rotatedClockwise: (sx, sy) = (dy, sh - 1 - dx)
                    case .rotatedCounterClockwise: (sx, sy) = (sw - 1 - dy, dx)
                    case .upsideDown: (sx, sy) = (sw - 1 - dx, sh - 1 - dy)
                    case .mirrored: (sx, sy) = (sw - 1 - dx, dy)
                    case .transposed: (sx, sy) = (dy, dx)
                    case .transverse: (sx, sy) = (sw - 1 - dy, sh - 1 - dx)
                    case .up, .flipped: (sx, sy) = (dx, dy)
                    }
                    let from = source + sy * sourceRow + sx * 3
                    let to = row + dx * 3
                    to[0] = from[0]; to[1] = from[1]; to[2] = from[2]
                }
            }
        }
    }
}
