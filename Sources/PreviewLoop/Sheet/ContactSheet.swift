/// How a contact sheet looks: colours, fonts and which text it carries.
public struct ContactSheetStyle: Hashable, Sendable {
    /// The colour behind the header, in the gaps and margins (opaque; alpha is ignored).
    public var background: RGBAColor = .black
    /// The colour of the header and of the tile times.
    public var textColor: RGBAColor = .white
    /// Whether each tile shows its frame's time in its bottom-right corner.
    public var showsTimestamps = true
    /// One font file for all text; `nil` for Debian's DejaVu (Sans Bold title, Sans details, Sans Mono times).
    public var fontPath: String?
    /// The title line's pixel size; the details line is 0.8 of it.
    public var headerFontSize = 16

    /// The default style: white DejaVu text on black.
    public init() {}

    /// The tile times' pixel size for a tile width: one twentieth of it, 9 to 32 pixels (14 px on a
    /// 300-pixel tile, 9 px on a 160-pixel strip tile).
    public static func timestampFontSize(tileWidth: Int) -> Int {
        min(32, max(9, tileWidth / 20))
    }
}

/// A contact sheet's header: the file name on a title line, then the clip's details.
public struct ContactSheetHeader: Hashable, Sendable {
    /// The title line: the file name.
    public var title: String
    /// The details line: duration, display size, codec, frame rate, bit rate, file size.
    public var details: String

    /// Creates a header from its two lines.
    public init(title: String, details: String) {
        self.title = title
        self.details = details
    }

    /// The header for a clip: `name` on the title line; `Duration 1:02.50 · 1920x1080 · h264 · 25 fps ·
    /// 4.20 Mb/s · 33.1 MB` below, leaving out what is unknown.
    public init(name: String, info: VideoInfo, fileSize: Int?) {
        var parts: [String] = []
        if let duration = info.duration { parts.append("Duration " + ContactSheet.timestampText(duration, clipDuration: duration)) }
        parts.append(info.displaySize.description)
        parts.append(info.codecName)
        if let rate = info.frameRate?.doubleValue {
            var text = DecimalText.fixed(rate, 2)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            parts.append(text + " fps")
        }
        if let bitRate = info.bitRate, bitRate > 0 {
            parts.append(bitRate >= 1_000_000 ? DecimalText.fixed(Double(bitRate) / 1e6, 2) + " Mb/s"
                             : DecimalText.fixed(Double(bitRate) / 1e3, 0) + " kb/s")
        }
        if let fileSize {
            parts.append(fileSize >= 1_000_000 ? DecimalText.fixed(Double(fileSize) / 1e6, 1) + " MB"
                             : fileSize >= 1_000 ? DecimalText.fixed(Double(fileSize) / 1e3, 1) + " kB"
                             : "\(fileSize) B")
        }
        self.init(title: name, details: parts.joined(separator: "  ·  "))
    }
}

/// One tile of a sheet: a picture and the time of the frame it shows.
public struct ContactSheetTile: Sendable {
    /// The picture, at the layout's tile size (a smaller one sits at the tile's top-left).
    public var image: RGBImage
    /// Seconds from the video stream's start, printed on the tile.
    public var time: Double

    /// Creates a tile.
    public init(image: RGBImage, time: Double) {
        self.image = image
        self.time = time
    }
}

/// Draws contact sheets: tiles in a grid with gaps and margins, each with its time, under a header, with
/// text drawn by FreeType (see ``Font``).
///
/// Not thread-safe (it holds fonts): make one per thread.
public final class ContactSheet {
    /// The style.
    public let style: ContactSheetStyle
    private let titleFont: Font?
    private let detailsFont: Font?

    /// Opens the header fonts when `hasHeader`, and checks the timestamp font is there when the style
    /// shows times, so a missing font is reported before any work.
    ///
    /// - Throws: ``PreviewLoopError/Code/inputNotFound`` when a font file is missing.
    public init(style: ContactSheetStyle = .init(), hasHeader: Bool = true) throws(PreviewLoopError) {
        self.style = style
        if hasHeader {
            titleFont = try Font(path: style.fontPath ?? Font.defaultBoldPath, pixelSize: style.headerFontSize)
            detailsFont = try Font(path: style.fontPath ?? Font.defaultSansPath,
                                   pixelSize: max(4, Int((Double(style.headerFontSize) * 0.8).rounded())))
        } else {
            titleFont = nil
            detailsFont = nil
        }
        if style.showsTimestamps { _ = try timestampFont(tileWidth: 160) }
    }

    /// The header band's height: the title line, 4 pixels, the details line; 0 without a header.
    public var headerHeight: Int {
        guard let titleFont, let detailsFont else { return 0 }
        return titleFont.lineHeight + 4 + detailsFont.lineHeight
    }

    /// The font tile times are drawn with, at the size for `tileWidth`.
    public func timestampFont(tileWidth: Int) throws(PreviewLoopError) -> Font {
        try Font(path: style.fontPath ?? Font.defaultMonoPath,
                 pixelSize: ContactSheetStyle.timestampFontSize(tileWidth: tileWidth))
    }

    /// The sheet: background, header (when `header` is given and the layout has room for it), each
    /// tile in its frame with its time.
    public func render(_ tiles: [ContactSheetTile], layout: ContactSheetLayout, header: ContactSheetHeader?,
                       clipDuration: Double?) throws(PreviewLoopError) -> RGBImage {
        guard tiles.count <= layout.columns * layout.rows else {
            throw PreviewLoopError(.invalidArgument, "\(tiles.count) tiles do not fit a layout of \(layout.columns)x\(layout.rows) cells")
        }
        var sheet = try RGBImage(filledWith: style.background, size: layout.size)
        if let header, layout.headerHeight > 0, let titleFont, let detailsFont {
            let frame = layout.headerFrame
            let title = titleFont.truncated(header.title, toWidth: frame.width)
            titleFont.draw(title, in: &sheet, x: frame.x, baseline: frame.y + titleFont.ascender, color: style.textColor)
            let details = detailsFont.truncated(header.details, toWidth: frame.width)
            detailsFont.draw(details, in: &sheet, x: frame.x,
                             baseline: frame.y + titleFont.lineHeight + 4 + detailsFont.ascender, color: style.textColor)
        }
        let font = style.showsTimestamps ? try timestampFont(tileWidth: layout.tileSize.width) : nil
        for (index, tile) in tiles.enumerated() {
            let frame = layout.tileFrame(index)
            sheet.draw(tile.image, atX: frame.x, y: frame.y)
            if let font {
                Self.drawTimestamp(Self.timestampText(tile.time, clipDuration: clipDuration), in: &sheet, tile: frame,
                                   font: font, color: style.textColor)
            }
        }
        return sheet
    }

    /// Where a time label sits on a tile: a box at the bottom-right corner, inset by a quarter of the
    /// font size, as wide as the text plus that inset on each side.
    public static func timestampFrame(_ text: String, tile: Rect, font: Font) -> Rect {
        let padding = max(2, font.pixelSize / 4)
        let width = min(tile.width, font.width(of: text) + 2 * padding)
        let height = min(tile.height, font.lineHeight + padding)
        return Rect(x: tile.x + tile.width - width - padding / 2, y: tile.y + tile.height - height - padding / 2,
                    width: width, height: height)
    }

    /// Draws a time label on a tile: the box (black at 60 % over the picture) and the text in `color`.
    public static func drawTimestamp(_ text: String, in image: inout RGBImage, tile: Rect, font: Font, color: RGBAColor) {
        let box = timestampFrame(text, tile: tile, font: font)
        image.blend(RGBAColor(red: 0, green: 0, blue: 0, alpha: 153), over: box)
        let padding = max(2, font.pixelSize / 4)
        font.draw(text, in: &image, x: box.x + padding, baseline: box.y + padding / 2 + font.ascender, color: color)
    }

    /// A time as a tile shows it: `M:SS.cc` (hundredths) for clips under 10 minutes or of unknown
    /// length, `M:SS` up to an hour, `H:MM:SS` from an hour on. Hundredths are rounded; whole seconds
    /// are cut (as players show them).
    public static func timestampText(_ seconds: Double, clipDuration: Double?) -> String {
        let seconds = seconds.isFinite ? max(0, seconds) : 0
        let showsHundredths = (clipDuration ?? 0) < 600
        let hundredths = showsHundredths ? Int((seconds * 100).rounded()) : Int(seconds) * 100
        let whole = hundredths / 100
        let hours = whole / 3600, minutes = (whole / 60) % 60, secs = whole % 60
        var text = (clipDuration ?? 0) >= 3600 || hours > 0
            ? "\(hours):" + DecimalText.zeroPadded(minutes, 2) : "\(minutes)"
        text += ":" + DecimalText.zeroPadded(secs, 2)
        if showsHundredths { text += "." + DecimalText.zeroPadded(hundredths % 100, 2) }
        return text
    }
}

extension RGBImage {
    /// An image of one colour (its alpha ignored).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless both sides are 1 to ``maximumSide``.
    public init(filledWith color: RGBAColor, size: Size) throws(PreviewLoopError) {
        try self.init(width: size.width, height: size.height)
        let pattern = [color.red, color.green, color.blue]
        if pattern != [0, 0, 0] {
            for index in stride(from: 0, to: pixels.count, by: 3) {
                pixels[index] = pattern[0]
                pixels[index + 1] = pattern[1]
                pixels[index + 2] = pattern[2]
            }
        }
    }

    /// Blends `color` (by its alpha) over the pixels inside `rect`, clipped to the image.
    public mutating func blend(_ color: RGBAColor, over rect: Rect) {
        let left = max(0, rect.x), right = min(width, rect.x + rect.width)
        let top = max(0, rect.y), bottom = min(height, rect.y + rect.height)
        guard left < right, top < bottom, color.alpha > 0 else { return }
        let alpha = Int(color.alpha), channels = [Int(color.red), Int(color.green), Int(color.blue)]
        let stride = bytesPerRow
        pixels.withUnsafeMutableBufferPointer { pixels in
            for y in top..<bottom {
                for x in left..<right {
                    let offset = y * stride + x * 3
                    for channel in 0..<3 {
                        let under = Int(pixels[offset + channel])
                        pixels[offset + channel] = UInt8((under * (255 - alpha) + channels[channel] * alpha + 127) / 255)
                    }
                }
            }
        }
    }
}
