import Foundation
import PreviewLoop

/// Clips made with the ffmpeg CLI for the smart crop: a flat grey frame with a saturated, textured
/// object (`testsrc2`) off-centre, and the same grey with nothing on it.
package enum SmartCropClips {
    static let directory = TestPaths.temporaryDirectory()

    /// Where the object is in the 640x360 frame.
    package static let object = Rect(x: 510, y: 120, width: 120, height: 120)

    /// 640x360 grey (or `size`), 10 fps, 1 s, the object at ``object``; `filters` run after the overlay
    /// (`setsar` for an anamorphic copy), `moving` moves the object from the right third to the left one
    /// at 0.5 s, `flat` leaves it out. Drawn in 4:4:4, which keeps odd sizes.
    /// Made once per test run: written under a name of its own, then renamed, so tests running at the
    /// same time never read a half-written clip.
    package static func make(_ name: String, filters: String = "", moving: Bool = false, flat: Bool = false,
                             encoder: [String] = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18"],
                             fileExtension: String = "mp4", size: Size = Size(width: 640, height: 360)) throws -> String {
        let path = directory + "/\(name).\(fileExtension)"
        if FileManager.default.fileExists(atPath: path) { return path }
        let partial = directory + "/\(UUID().uuidString)-\(name).\(fileExtension)"
        let x = moving ? "if(lt(t,0.5),\(object.x),10)" : "\(object.x)"
        let graph = flat ? "[0]null" + (filters.isEmpty ? "" : "," + filters)
            : "[0][1]overlay=x='\(x)':y=\(object.y):format=yuv444" + (filters.isEmpty ? "" : "," + filters)
        let result = try Child.tool("ffmpeg", ["-v", "error", "-nostdin", "-y",
                                               "-f", "lavfi", "-i", "color=gray:s=\(size.width)x\(size.height):r=10:d=1,format=yuv444p",
                                               "-f", "lavfi", "-i", "testsrc2=s=\(object.width)x\(object.height):r=10:d=1",
                                               "-filter_complex", graph] + encoder + [partial])
        guard result.status == 0 else { throw OracleError(message: "ffmpeg could not make \(name): \(result.stderr)") }
        guard rename(partial, path) == 0 else { throw OracleError(message: "could not rename \(partial) to \(path)") }
        return path
    }

    /// The ffmpeg filter for `crop` of the upright picture (after `before`, e.g. a transpose), scaled to
    /// `output` as the reference for aspect-fill frames is (see ``Oracle/aspectFillFilter``).
    package static func cropFilter(_ crop: Rect, output: Size, before: String = "") -> String {
        (before.isEmpty ? "" : before + ",")
            + "crop=\(crop.width):\(crop.height):\(crop.x):\(crop.y):exact=1,"
            + "scale=\(output.width):\(output.height):flags=bicubic+full_chroma_int+accurate_rnd,setsar=1"
    }

    /// The share of `object`'s area inside `window`.
    package static func coverage(of object: Rect, by window: Rect) -> Double {
        let width = min(object.x + object.width, window.x + window.width) - max(object.x, window.x)
        let height = min(object.y + object.height, window.y + window.height) - max(object.y, window.y)
        return Double(max(0, width) * max(0, height)) / Double(object.width * object.height)
    }
}
