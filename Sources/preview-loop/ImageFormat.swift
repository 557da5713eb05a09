import PreviewLoop

/// An image file format the CLI writes, chosen by the output path's extension.
///
/// Only PPM exists today. To add one (PNG, JPEG, WebP): add a case, its extensions in
/// ``fileExtensions`` and its encoder in ``encode(_:)``; parsing and help pick it up from ``allCases``.
enum ImageFormat: String, CaseIterable, Sendable {
    /// Binary PPM (`P6`), 8-bit RGB, written in pure Swift.
    case ppm

    /// The extensions that select this format, lower-case, without the dot.
    var fileExtensions: [String] {
        switch self {
        case .ppm: ["ppm"]
        }
    }

    /// The format a path's extension names, ignoring case; `nil` for none or an unknown one.
    init?(path: String) {
        guard let fileExtension = Self.fileExtension(of: path),
              let format = Self.allCases.first(where: { $0.fileExtensions.contains(fileExtension) }) else { return nil }
        self = format
    }

    /// Encodes an image as this format's file bytes.
    func encode(_ image: RGBImage) throws -> [UInt8] {
        switch self {
        case .ppm: PPM.encode(image)
        }
    }

    /// `.ppm`, or `.png, .ppm` once there are several: for help and error messages.
    static var extensionList: String {
        allCases.flatMap(\.fileExtensions).map { ".\($0)" }.joined(separator: ", ")
    }

    /// The lower-cased text after the last `.` of the last path component, if there is some.
    ///
    /// A leading dot alone (`.ppm`, a hidden file) is not an extension, as in Foundation.
    static func fileExtension(of path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let fileExtension = name[name.index(after: dot)...]
        return fileExtension.isEmpty ? nil : fileExtension.lowercased()
    }
}
