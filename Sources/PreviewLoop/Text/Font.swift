import CFreeType
import Glibc

/// A TrueType or OpenType font at one pixel size, read by FreeType: measures text and draws it
/// anti-aliased (FreeType's 8-bit coverage, hinted) onto an ``RGBImage``.
///
/// Owns its `FT_Library` and `FT_Face` (freed in `deinit`); glyphs are rendered once and kept. Not
/// thread-safe (FreeType's objects are not): use one `Font` from one thread.
///
/// ```swift
/// let font = try Font(path: Font.defaultSansPath, pixelSize: 16)
/// font.draw("0:12.40", in: &image, x: 8, baseline: 20, color: .white)
/// ```
public final class Font {
    /// Debian's DejaVu Sans (package `fonts-dejavu-core`), the default for headers.
    public static let defaultSansPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// Debian's DejaVu Sans Bold, the default for a sheet's title line.
    public static let defaultBoldPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    /// Debian's DejaVu Sans Mono, the default for tile times (digits keep their places).
    public static let defaultMonoPath = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

    /// The font file.
    public let path: String
    /// The size in pixels (FreeType's pixel size: about the height of the em square).
    public let pixelSize: Int
    /// Pixels from the baseline up to the top of the tallest glyphs.
    public let ascender: Int
    /// Pixels from the baseline down to the bottom of the lowest glyphs (positive).
    public let descender: Int

    /// One rendered glyph: its coverage bitmap and placement.
    private struct Glyph {
        var index: UInt32
        var width: Int
        var rows: Int
        /// Pixels from the pen to the bitmap's left edge.
        var left: Int
        /// Pixels from the baseline up to the bitmap's top edge.
        var top: Int
        /// Pixels the pen moves right after the glyph.
        var advance: Int
        /// `rows * width` coverage values, 0 (none) to 255 (full).
        var coverage: [UInt8]
    }

    private var library: FT_Library?
    /// The font file's bytes, which the face reads from.
    private let fileData: UnsafeMutableBufferPointer<UInt8>
    /// The largest font file read (the biggest CJK fonts are about 20 MB).
    public static let maxFileBytes = 64 << 20
    private var face: FT_Face?
    private var glyphs: [UInt32: Glyph] = [:]
    private let hasKerning: Bool

    /// Opens the font file at `pixelSize` pixels.
    ///
    /// - Throws: ``PreviewLoopError/Code/inputNotFound`` when the file is missing (naming Debian's
    ///   `fonts-dejavu-core` for the default fonts), ``PreviewLoopError/Code/invalidArgument`` for a size
    ///   outside 4–512 or a file FreeType cannot read as a font.
    public init(path: String, pixelSize: Int) throws(PreviewLoopError) {
        guard (4...512).contains(pixelSize) else {
            throw PreviewLoopError(.invalidArgument, "a font size must be 4 to 512 pixels, not \(pixelSize)")
        }
        self.path = path
        self.pixelSize = pixelSize
        guard FileSystem.access(path, R_OK) == 0 else {
            let hint = path.hasPrefix("/usr/share/fonts/truetype/dejavu/")
                ? " (install Debian's fonts-dejavu-core, or pass --font FILE)" : ""
            throw PreviewLoopError(.inputNotFound, "font file '\(path)' not found or not readable\(hint)")
        }
        // Read whole here, and only from a regular file of bounded size: FreeType opening a named pipe
        // would wait for a writer for ever, and a device would never end.
        let bytes = try FileSystem.readRegularFile(path, limit: Self.maxFileBytes, what: "font file")
        // FreeType reads the face from this memory for as long as the face lives: a copy of our own.
        fileData = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, bytes.count))
        _ = fileData.initialize(from: bytes)
        let fileLength = bytes.count
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else {
            fileData.deallocate()
            throw PreviewLoopError(.invalidArgument, "FreeType could not start (FT_Init_FreeType)")
        }
        self.library = library
        var face: FT_Face?
        let opened = FT_New_Memory_Face(library, fileData.baseAddress, FT_Long(fileLength), 0, &face)
        guard opened == 0, let face else {
            FT_Done_FreeType(library)
            self.library = nil
            fileData.deallocate()
            throw PreviewLoopError(.invalidArgument, "'\(path)' is not a font FreeType can read (FT_New_Face error \(opened))")
        }
        self.face = face
        guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelSize)) == 0 else {
            FT_Done_Face(face)
            FT_Done_FreeType(library)
            self.face = nil
            self.library = nil
            fileData.deallocate()
            throw PreviewLoopError(.invalidArgument, "the font '\(path)' has no \(pixelSize)-pixel size")
        }
        // Size metrics are 26.6 fixed point.
        let metrics = face.pointee.size.pointee.metrics
        ascender = Int((metrics.ascender + 63) >> 6)
        descender = Int((-metrics.descender + 63) >> 6)
        hasKerning = face.pointee.face_flags & FT_Long(FT_FACE_FLAG_KERNING) != 0
    }

    deinit {
        if let face { FT_Done_Face(face) }
        if let library { FT_Done_FreeType(library) }
        fileData.deallocate()
    }

    /// Pixels from one line's top to the next: ascender plus descender.
    public var lineHeight: Int { ascender + descender }

    /// The width in pixels the text takes when drawn (pen advances, kerning included).
    public func width(of text: String) -> Int {
        var pen = 0
        layout(text) { glyph, x in pen = x + glyph.advance }
        return pen
    }

    /// The longest prefix of `text` that fits `maximumWidth` pixels, with `…` when something was cut.
    public func truncated(_ text: String, toWidth maximumWidth: Int) -> String {
        guard width(of: text) > maximumWidth else { return text }
        var characters = Array(text)
        while !characters.isEmpty {
            characters.removeLast()
            let candidate = String(characters) + "…"
            if width(of: candidate) <= maximumWidth { return candidate }
        }
        return ""
    }

    /// Draws `text` with its left edge at `x` and its baseline at `baseline`, blending `color` (with its
    /// alpha) by each pixel's coverage; what falls outside the image is clipped.
    public func draw(_ text: String, in image: inout RGBImage, x: Int, baseline: Int, color: RGBAColor) {
        let width = image.width, height = image.height, stride = image.bytesPerRow
        let colour = [Int(color.red), Int(color.green), Int(color.blue)]
        let opacity = Int(color.alpha)
        image.pixels.withUnsafeMutableBufferPointer { pixels in
            layout(text) { glyph, penX in
                let originX = x + penX + glyph.left, originY = baseline - glyph.top
                for row in 0..<glyph.rows {
                    let y = originY + row
                    guard y >= 0, y < height else { continue }
                    for column in 0..<glyph.width {
                        let px = originX + column
                        guard px >= 0, px < width else { continue }
                        let weight = Int(glyph.coverage[row * glyph.width + column]) * opacity
                        guard weight > 0 else { continue }
                        let offset = y * stride + px * 3
                        for channel in 0..<3 {
                            let under = Int(pixels[offset + channel])
                            // under + (colour − under) × weight / 255², rounded.
                            let blended = under * 65_025 + (colour[channel] - under) * weight
                            pixels[offset + channel] = UInt8(clamping: (blended + 32_512) / 65_025)
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with each glyph of `text` and its pen position, kerning applied.
    private func layout(_ text: String, _ body: (Glyph, Int) -> Void) {
        var pen = 0
        var previous: UInt32?
        for scalar in text.unicodeScalars {
            guard let glyph = glyph(for: scalar.value) else { continue }
            if hasKerning, let previous, let face {
                var kerning = FT_Vector()
                if FT_Get_Kerning(face, previous, glyph.index, FT_KERNING_DEFAULT.rawValue, &kerning) == 0 {
                    pen += Int(kerning.x >> 6)
                }
            }
            body(glyph, pen)
            pen += glyph.advance
            previous = glyph.index
        }
    }

    /// The rendered glyph for a code point (the font's missing-glyph box when it has none); `nil` only
    /// when FreeType fails.
    private func glyph(for codePoint: UInt32) -> Glyph? {
        if let glyph = glyphs[codePoint] { return glyph }
        guard let face else { return nil }
        let index = FT_Get_Char_Index(face, FT_ULong(codePoint))
        guard FT_Load_Glyph(face, index, Int32(FT_LOAD_RENDER)) == 0, let slot = face.pointee.glyph else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width), rows = Int(bitmap.rows)
        var coverage = [UInt8](repeating: 0, count: width * rows)
        if width > 0, rows > 0, let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
            let pitch = Int(bitmap.pitch)
            for row in 0..<rows {
                let source = pitch >= 0 ? buffer + row * pitch : buffer + (rows - 1 - row) * -pitch
                for column in 0..<width { coverage[row * width + column] = source[column] }
            }
        }
        let glyph = Glyph(index: index, width: width, rows: rows, left: Int(slot.pointee.bitmap_left),
                          top: Int(slot.pointee.bitmap_top), advance: Int((slot.pointee.advance.x + 32) >> 6),
                          coverage: coverage)
        glyphs[codePoint] = glyph
        return glyph
    }
}
