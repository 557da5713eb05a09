import Foundation
import Synchronization
import PreviewLoop

extension Oracle {
    /// ffmpeg's decoded frames as ffprobe lists them, in presentation order.
    package struct FrameList: Sendable {
        /// Seconds from the video stream's start.
        package var times: [Double]
        /// Whether each frame is a keyframe.
        package var keyframes: [Bool]
    }

    /// ffmpeg's frames with their images (aspect-filled to a size), times and key flags.
    package struct Reference: Sendable {
        package var images: [RGBImage]
        package var times: [Double]
        package var keyframes: [Bool]
    }

    /// Frame times (from the video stream's start) and key flags, from one ffprobe run.
    ///
    /// Unlike `frameTimes(of:)` this reads ffprobe's JSON: for MPEG-TS ffprobe prints the stream twice
    /// in CSV (program and stream sections), which `streamStart(of:)` cannot parse and turns into 0.
    package static func frameList(of path: String) throws -> FrameList {
        let result = try Child.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "stream=start_time:frame=key_frame,best_effort_timestamp_time", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        guard let streams = json?["streams"] as? [[String: Any]], let frames = json?["frames"] as? [[String: Any]],
              let start = (streams.first?["start_time"] as? String).flatMap(Double.init) else {
            throw OracleError(message: "ffprobe gave no frames or start_time for \(path): \(result.stderr)")
        }
        let times = frames.compactMap { ($0["best_effort_timestamp_time"] as? String).flatMap(Double.init).map { $0 - start } }
        let keyframes = frames.compactMap { $0["key_frame"] as? Int }.map { $0 == 1 }
        guard times.count == frames.count, keyframes.count == frames.count else {
            throw OracleError(message: "ffprobe listed frames without times or key flags for \(path)")
        }
        return FrameList(times: times, keyframes: keyframes)
    }

    /// Frame times from the video stream's start (see ``frameList(of:)``).
    package static func relativeFrameTimes(of path: String) throws -> [Double] {
        try frameList(of: path).times
    }

    /// References already computed, by fixture, geometry and size; tests share them.
    private static let references = Mutex<[String: Reference]>([:])

    /// ffmpeg's frames of `fixture` aspect-filled to `size`, their times and key flags (cached).
    package static func reference(_ fixture: String, upright: Size, sampleAspect: Double = 1, size: Size) throws -> Reference {
        let key = "\(fixture) \(upright) \(sampleAspect) \(size)"
        if let cached = references.withLock({ $0[key] }) { return cached }
        let path = TestPaths.fixture(fixture)
        let filter = aspectFillFilter(uprightWidth: upright.width, uprightHeight: upright.height,
                                      sampleAspect: sampleAspect, output: size)
        let images = try frames(of: path, filter: filter, size: size), list = try frameList(of: path)
        guard images.count == list.times.count, images.count > 5 else {
            throw OracleError(message: "ffmpeg gave \(images.count) frames, ffprobe listed \(list.times.count) for \(fixture)")
        }
        let reference = Reference(images: images, times: list.times, keyframes: list.keyframes)
        references.withLock { $0[key] = reference }
        return reference
    }

    /// The index of the frame displayed at `time`: the last one whose time is at or before it.
    package static func displayedIndex(at time: Double, times: [Double]) -> Int {
        times.lastIndex { $0 <= time + 1e-6 } ?? 0
    }
}

extension Compare {
    /// `best(_:among:)` with the same result, computed over raw buffers with integer sums: about ten
    /// times faster in debug builds, where these suites compare hundreds of frames.
    package static func bestMatch(_ image: RGBImage, among candidates: [RGBImage]) -> (index: Int, psnr: Double) {
        var best = (index: -1, psnr: -Double.infinity)
        image.pixels.withUnsafeBufferPointer { a in
            for (index, candidate) in candidates.enumerated() where candidate.pixels.count == a.count {
                let sum = candidate.pixels.withUnsafeBufferPointer { b in
                    var sum = 0
                    for offset in 0..<a.count {
                        let d = Int(a[offset]) - Int(b[offset])
                        sum += d * d
                    }
                    return sum
                }
                let mse = Double(sum) / Double(a.count)
                let value = mse == 0 ? Double.infinity : 10 * log10(255 * 255 / mse)
                if value > best.psnr { best = (index, value) }
            }
        }
        return best
    }
}
