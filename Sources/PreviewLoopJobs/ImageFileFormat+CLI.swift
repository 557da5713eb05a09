import PreviewLoop

/// The CLI's use of the library's ``ImageFileFormat`` (PPM, PNG, JPEG, WebP, AVIF), chosen by an output
/// path's extension.
///
/// To add a format: add a case to `ImageFileFormat` with its extensions and its encoder in
/// `ImageEncoder`; parsing, `--quality` checks and help pick it up from `allCases`.
extension ImageFileFormat {
    /// Encodes an image as this format's file bytes; `quality` (0–100) applies to lossy formats only.
    func encode(_ image: RGBImage, quality: Int? = nil) throws -> [UInt8] {
        try ImageEncoder.encode(image, as: self, quality: quality)
    }

    /// `.ppm, .png, .jpg, .jpeg, .webp, .avif`: for help and error messages.
    static var extensionList: String {
        allCases.flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }

    /// `.jpg, .jpeg, .webp, .avif`: the extensions whose formats take `--quality`.
    static var lossyExtensionList: String {
        allCases.filter(\.isLossy).flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }
}
