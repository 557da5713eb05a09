/// Keeps an animation's palette indices where its picture did not change, so that static areas are
/// not dithered afresh on every frame.
///
/// Floyd–Steinberg spreads each frame's error differently, so even a still background gets a new
/// dither pattern from frame to frame: every pixel changes, GIF's encoder cannot crop to the changed
/// rectangle or mark unchanged pixels transparent, and files grow two- to threefold. Here a pixel keeps
/// the index it had as long as its colour stays within `tolerance` (per channel, of 255) of the colour
/// that index was chosen for — compared with that colour, not with the previous frame, so a slow drift
/// cannot creep away unnoticed. FFmpeg's `gif` encoder then crops each frame to what changed and turns
/// unchanged pixels into its transparent index (its default `offsetting` and `transdiff` flags).
struct StableIndices {
    /// The largest per-channel change (0–255) that keeps a pixel's index.
    let tolerance: Int
    /// The colours the kept indices were chosen for, RGB24; empty before the first frame.
    private var chosenFor: [UInt8] = []
    /// The indices of the previous frame.
    private var previous: [UInt8] = []

    /// Creates the state for one animation.
    init(tolerance: Int) {
        self.tolerance = tolerance
    }

    /// This frame's indices: `fresh` (the frame dithered on its own) where the picture changed, the
    /// previous frame's where it did not.
    mutating func indices(_ fresh: [UInt8], for image: RGBImage) -> [UInt8] {
        guard chosenFor.count == image.pixels.count, previous.count == fresh.count else {
            chosenFor = image.pixels
            previous = fresh
            return fresh
        }
        let tolerance = tolerance
        var result = fresh
        chosenFor.withUnsafeMutableBufferPointer { chosen in
            image.pixels.withUnsafeBufferPointer { pixels in
                previous.withUnsafeBufferPointer { previous in
                    result.withUnsafeMutableBufferPointer { result in
                        for pixel in 0..<result.count {
                            let offset = pixel * 3
                            let red = abs(Int(pixels[offset]) - Int(chosen[offset]))
                            let green = abs(Int(pixels[offset + 1]) - Int(chosen[offset + 1]))
                            let blue = abs(Int(pixels[offset + 2]) - Int(chosen[offset + 2]))
                            if max(red, green, blue) <= tolerance {
                                result[pixel] = previous[pixel]
                            } else {
                                chosen[offset] = pixels[offset]
                                chosen[offset + 1] = pixels[offset + 1]
                                chosen[offset + 2] = pixels[offset + 2]
                            }
                        }
                    }
                }
            }
        }
        previous = result
        return result
    }
}
