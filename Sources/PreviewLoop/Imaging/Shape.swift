import Glibc

/// A point in pixel coordinates: `x` to the right, `y` down, `(0, 0)` the top-left corner of the
/// top-left pixel (whose centre is `(0.5, 0.5)`).
public struct Point: Hashable, Sendable {
    /// The horizontal coordinate.
    public var x: Double
    /// The vertical coordinate.
    public var y: Double

    /// Creates a point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A filled shape the compositor draws and masks with, anti-aliased.
///
/// Anti-aliasing uses the signed distance `d` from a pixel's centre to the shape's edge (negative
/// inside): the pixel's coverage is `d` clamped into a one-pixel ramp, `clamp(0.5 - d, 0, 1)`. A
/// straight edge through a pixel's centre covers it by one half, as an exact area would; summed over
/// a shape, coverage equals its area to within a fraction of a pixel per unit of edge curvature.
public enum Shape: Hashable, Sendable {
    /// A disc.
    case disc(center: Point, radius: Double)
    /// A rectangle from `origin` of `width` by `height` whose corners are quarter circles of
    /// `cornerRadius` (clamped to half the shorter side).
    case roundedRectangle(origin: Point, width: Double, height: Double, cornerRadius: Double)
    /// A convex polygon through `vertices`, in either winding order.
    case convexPolygon([Point])

    /// The signed distance from `point` to the edge: negative inside, positive outside.
    ///
    /// Exact for discs and rounded rectangles; for polygons, the largest distance to an edge's line,
    /// which is exact except near vertices, where it rounds the outside corner slightly outward.
    public func signedDistance(to point: Point) -> Double {
        switch self {
        case .disc(let center, let radius):
            return ((point.x - center.x) * (point.x - center.x) + (point.y - center.y) * (point.y - center.y)).squareRoot() - radius
        case .roundedRectangle(let origin, let width, let height, let cornerRadius):
            let halfWidth = width / 2, halfHeight = height / 2
            let radius = max(0, min(cornerRadius, halfWidth, halfHeight))
            let qx = abs(point.x - (origin.x + halfWidth)) - (halfWidth - radius)
            let qy = abs(point.y - (origin.y + halfHeight)) - (halfHeight - radius)
            let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
            return outside + min(max(qx, qy), 0) - radius
        case .convexPolygon(let vertices):
            guard vertices.count >= 3 else { return .infinity }
            // The sign of the area tells the winding, so that "outside" is the same side of every edge.
            var area = 0.0
            for index in vertices.indices {
                let a = vertices[index], b = vertices[(index + 1) % vertices.count]
                area += a.x * b.y - b.x * a.y
            }
            let orientation = area >= 0 ? 1.0 : -1.0
            var distance = -Double.infinity
            for index in vertices.indices {
                let a = vertices[index], b = vertices[(index + 1) % vertices.count]
                let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
                guard length > 0 else { continue }
                // Outward normal of edge a→b for counter-clockwise (in y-down coordinates, area > 0) order.
                let side = ((b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x)) / length
                distance = max(distance, -side * orientation)
            }
            return distance
        }
    }

    /// How much of the pixel at column `x`, row `y` the shape covers, 0 to 1 (see the type's notes).
    public func coverage(ofPixelX x: Int, y: Int) -> Double {
        let distance = signedDistance(to: Point(x: Double(x) + 0.5, y: Double(y) + 0.5))
        return min(1, max(0, 0.5 - distance))
    }

    /// The pixel rows and columns the shape can touch within `size` (with the anti-aliasing ramp).
    func pixelBounds(in size: Size) -> (columns: Range<Int>, rows: Range<Int>) {
        let minX: Double, minY: Double, maxX: Double, maxY: Double
        switch self {
        case .disc(let center, let radius):
            (minX, minY, maxX, maxY) = (center.x - radius, center.y - radius, center.x + radius, center.y + radius)
        case .roundedRectangle(let origin, let width, let height, _):
            (minX, minY, maxX, maxY) = (origin.x, origin.y, origin.x + width, origin.y + height)
        case .convexPolygon(let vertices):
            (minX, minY) = (vertices.map(\.x).min() ?? 0, vertices.map(\.y).min() ?? 0)
            (maxX, maxY) = (vertices.map(\.x).max() ?? 0, vertices.map(\.y).max() ?? 0)
        }
        func clamped(_ low: Double, _ high: Double, _ limit: Int) -> Range<Int> {
            guard low.isFinite, high.isFinite else { return 0..<0 }
            // Clamped in Double first: a shape from hostile sizes may lie 1e300 pixels away.
            let first = Int(max(0, min(Double(limit), (low - 1).rounded(.down))))
            let last = max(first, Int(max(0, min(Double(limit), (high + 1).rounded(.up)))))
            return first..<last
        }
        return (clamped(minX, maxX, size.width), clamped(minY, maxY, size.height))
    }
}

/// How much of each pixel of a picture a shape covers, 0 (not at all) to 255 (fully): the alpha of a
/// mask. Built from a ``Shape``; used to cut pictures (rounded corners) and to blend one picture into
/// another through a shape (the circular reveal).
public struct CoverageMask: Hashable, Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// One coverage value per pixel, row by row, 0–255.
    public var values: [UInt8]

    /// A mask of one value everywhere (0: nothing covered; 255: everything).
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless both sides are 1 to ``RGBImage/maximumSide``.
    public init(size: Size, value: UInt8) throws(PreviewLoopError) {
        try RGBImage.checkSize(width: size.width, height: size.height)
        width = size.width
        height = size.height
        values = [UInt8](repeating: value, count: size.area)
    }

    /// The anti-aliased coverage of `shape` over a picture of `size`; `inverted` covers the outside.
    ///
    /// - Throws: ``PreviewLoopError/Code/invalidArgument`` unless both sides are 1 to ``RGBImage/maximumSide``.
    public init(_ shape: Shape, size: Size, inverted: Bool = false) throws(PreviewLoopError) {
        try self.init(size: size, value: inverted ? 255 : 0)
        let (columns, rows) = shape.pixelBounds(in: size)
        let width = self.width
        values.withUnsafeMutableBufferPointer { buffer in
            for y in rows {
                for x in columns {
                    let covered = UInt8((shape.coverage(ofPixelX: x, y: y) * 255).rounded())
                    buffer[y * width + x] = inverted ? 255 - covered : covered
                }
            }
        }
    }

    /// The mask's size.
    public var size: Size { Size(width: width, height: height) }

    /// The coverage of one pixel, 0 to 1.
    public subscript(x: Int, y: Int) -> Double { Double(values[y * width + x]) / 255 }

    /// The covered fraction of the whole picture, 0 to 1 (the covered area over the picture's area).
    public var coveredFraction: Double {
        Double(values.reduce(0) { $0 + Int($1) }) / 255 / Double(values.count)
    }
}
