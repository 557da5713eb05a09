/// Where everything on a contact sheet goes: a header band, then a grid of equal tiles separated by
/// gaps, the whole inside a margin. Pure geometry, no pixels.
///
/// ```
/// ┌ margin ───────────────────────────────┐
/// │ header (title line, details line)     │
/// │ ─ gap ─                               │
/// │ [tile] gap [tile] gap [tile] gap [tile]│
/// │  gap                                  │
/// │ [tile] gap [tile] …                   │
/// └ margin ───────────────────────────────┘
/// ```
public struct ContactSheetLayout: Hashable, Sendable {
    /// Tiles per row.
    public var columns: Int
    /// Rows of tiles.
    public var rows: Int
    /// Every tile's size.
    public var tileSize: Size
    /// Pixels between neighbouring tiles, and between the header and the first row.
    public var gap: Int
    /// Pixels around everything.
    public var margin: Int
    /// The header band's height; 0 for no header.
    public var headerHeight: Int

    /// Creates a layout; every count and length must be positive (gap, margin and header may be 0).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` otherwise.
    public init(columns: Int, rows: Int, tileSize: Size, gap: Int = 0, margin: Int = 0, headerHeight: Int = 0) throws(PreviewLoopError) {
        guard columns > 0, rows > 0, tileSize.width > 0, tileSize.height > 0, gap >= 0, margin >= 0, headerHeight >= 0 else {
            throw PreviewLoopError(.invalidArgument, "a sheet needs positive columns (\(columns)), rows (\(rows)) and tile size "
                + "(\(tileSize)), and a gap (\(gap)), margin (\(margin)) and header (\(headerHeight)) of at least 0")
        }
        self.columns = columns
        self.rows = rows
        self.tileSize = tileSize
        self.gap = gap
        self.margin = margin
        self.headerHeight = headerHeight
    }

    /// The tile width that makes a sheet `sheetWidth` pixels wide with `columns` tiles, or `nil` when the
    /// margins and gaps leave less than one pixel per tile. Pixels that do not divide evenly go to the
    /// right margin.
    public static func tileWidth(sheetWidth: Int, columns: Int, gap: Int, margin: Int) -> Int? {
        let available = sheetWidth - 2 * margin - (columns - 1) * gap
        guard columns > 0, available >= columns else { return nil }
        return available / columns
    }

    /// The tile height that keeps a picture's display aspect ratio at `tileWidth` (at least 1).
    public static func tileHeight(tileWidth: Int, displaySize: Size) -> Int {
        max(1, Int((Double(tileWidth) * Double(displaySize.height) / Double(max(1, displaySize.width))).rounded()))
    }

    /// The whole sheet's size.
    public var size: Size {
        let headerBand = headerHeight > 0 ? headerHeight + gap : 0
        return Size(width: 2 * margin + columns * tileSize.width + (columns - 1) * gap,
                    height: 2 * margin + headerBand + rows * tileSize.height + (rows - 1) * gap)
    }

    /// The header band: across the sheet inside the margins, at the top.
    public var headerFrame: Rect {
        Rect(x: margin, y: margin, width: size.width - 2 * margin, height: headerHeight)
    }

    /// Where tile `index` goes (left to right, top to bottom).
    public func tileFrame(_ index: Int) -> Rect {
        let headerBand = headerHeight > 0 ? headerHeight + gap : 0
        return Rect(x: margin + (index % columns) * (tileSize.width + gap),
                    y: margin + headerBand + (index / columns) * (tileSize.height + gap),
                    width: tileSize.width, height: tileSize.height)
    }
}
