// libFuzzer entry point: arbitrary bytes through the in-memory source (`Source.data`) into open →
// decode → scale, the path every untrusted input takes. Compiled together with the library's sources
// into one module by Fuzz/build.sh (`swiftc -sanitize=fuzzer,address`), so this file sees what the
// tests see; run with `make fuzz SECONDS=N`.
//
// What counts as a finding: a crash or sanitizer report in PreviewLoop (or in FFmpeg reached through
// it), a hang (libFuzzer's -timeout), or memory growth past libFuzzer's -rss_limit_mb. Errors thrown
// as PreviewLoopError are the expected outcome for almost every input and are ignored.
import Foundation

/// Limits for fuzzing: the defaults a caller gets, with shorter deadlines and a smaller picture limit
/// so each input is judged in milliseconds (a 35-megapixel picture is legal by default, and slow).
private let fuzzOptions = SourceOptions(openTimeout: 2, readTimeout: 2, jobTimeout: 4, maxPixels: 1920 * 1088)

/// The output size: small and of a different aspect than most inputs, so aspect-fill always crops.
private let fuzzSize = Size(width: 64, height: 36)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let data, count > 0 else { return 0 }
    let bytes = Data(bytes: data, count: count)

    // Stills: an exact frame at the start, then a keyframe later on (seeks inside the memory reader).
    if let sampler = try? FrameSampler(source: .data(bytes), threads: 1, options: fuzzOptions) {
        _ = try? sampler.frame(at: 0, size: fuzzSize)
        _ = try? sampler.frame(at: 0.5, size: fuzzSize, mode: .aspectFit, accuracy: .keyframe)
    }

    // A short loop: a 1 s window, two passes (the second from the frame cache), decoding on its own thread.
    let configuration = PreviewLoop.Configuration(size: fuzzSize, windowLength: .seconds(1), threads: 1,
                                                  sourceOptions: fuzzOptions)
    if let loop = try? PreviewLoop(source: .data(bytes), configuration: configuration) {
        var frames = 0
        try? loop.run(loops: 2) { frame in
            frames += 1
            precondition(frame.image.width == fuzzSize.width && frame.image.height == fuzzSize.height,
                         "a frame of the wrong size: \(frame.image.width)x\(frame.image.height)")
            precondition(frame.image.pixels.count == fuzzSize.area * 3, "a frame with the wrong byte count")
            // A window that never ends would hang the fuzzer: a 1 s window has far fewer frames.
            if frames > 10_000 { throw PreviewLoopError(.invalidArgument, "too many frames in a 1 s window") }
        }
    }
    return 0
}
