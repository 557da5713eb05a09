// libFuzzer entry point, three targets chosen by PREVIEW_LOOP_FUZZ_TARGET: `media`, arbitrary bytes
// through the in-memory source (`Source.data`) into open → decode → scale, the path every untrusted
// input takes; `timing`, the same on the far/gap family of crafted timestamps; `cli`, arguments for
// the command-line parser (the CLI's sources are compiled in, without its main.swift). Compiled together with the library's sources
// into one module by Fuzz/run.sh (`swiftc -sanitize=fuzzer,address`), so this file sees what the
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

/// Which target runs: `media` (default), `timing` or `cli`, from `PREVIEW_LOOP_FUZZ_TARGET` (set by
/// `Fuzz/run.sh`, which fuzzes each with its own seeds and corpus).
private let fuzzTarget: String = ProcessInfo.processInfo.environment["PREVIEW_LOOP_FUZZ_TARGET"] ?? "media"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let data, count > 0 else { return 0 }
    let bytes = Data(bytes: data, count: count)
    switch fuzzTarget {
    case "timing": fuzzTiming(bytes)
    case "cli": fuzzArguments(bytes)
    default: fuzzMedia(bytes)
    }
    return 0
}

/// Timestamps and durations: seeded with the far/gap family (clips 1e12 s and 1e9 s from zero, one
/// frame at 1e9 s, three at 1000 s, a 1e6 s gap), whose mutations put timestamps and declared
/// durations anywhere. Checks what ``TimingRule`` promises: a window delivers frames only inside
/// itself, a thumbnail track stays within its bound, nothing traps or runs unbounded.
private func fuzzTiming(_ bytes: Data) {
    let window = 3.0
    let configuration = LoopPlayer.Configuration(size: fuzzSize, windowLength: .seconds(window), threads: 1,
                                                  sourceOptions: fuzzOptions)
    if let loop = try? LoopPlayer(source: .data(bytes), configuration: configuration) {
        var frames = 0
        try? loop.run(loops: 1) { frame throws(PreviewLoopError) in
            frames += 1
            let time = frame.presentationTime.seconds
            precondition(time >= 0 && time < window, "a frame at \(time) s delivered in a \(window) s window")
            if frames > 10_000 { throw PreviewLoopError(.invalidArgument, "too many frames in a 3 s window") }
        }
    }
    if let sampler = try? FrameSampler(source: .data(bytes), threads: 1, options: fuzzOptions) {
        var sheets = 0
        let track = try? sampler.thumbnailTrack(every: 1, layout: .init(tileSize: Size(width: 8, height: 8), columns: 4, rows: 4),
                                                accuracy: .keyframe, maxThumbnails: 64) { _, _ in sheets += 1 }
        if let track { precondition(track.cues.count <= 64 && sheets <= 4, "\(track.cues.count) thumbnails over the bound of 64") }
    }
}

/// Command-line arguments: the input split at NUL bytes into arguments for the pure parser. Any
/// arguments must parse or be a usage error; an accepted command must be within its documented ranges.
private func fuzzArguments(_ bytes: Data) {
    let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    guard arguments.count <= 64 else { return }
    do {
        let command = try CommandLineParser.parse(arguments)
        switch command {
        case .command(let options as ThumbCommand):
            precondition(options.size.knownSizes.allSatisfy { $0.area <= 16384 * 16384 } && options.source.timeout <= 86_400)
        case .command(let options as StripCommand): precondition((1...1000).contains(options.count) && options.columns <= options.count)
        case .command(let options as RenderCommand): precondition((1...120).contains(options.framesPerSecond))
        case .command(let options as SpritesCommand):
            switch options.every {
            case .auto: break
            case .every(let seconds): precondition(seconds > 0 && seconds.isFinite)
            case .count(let count): precondition(count >= 1)
            }
        case .command(let options as CardCommand):
            let frames = PreviewCard.frameCount(duration: CardTimeline(style: options.style).duration,
                                                framesPerSecond: options.framesPerSecond)
            if case .still = options.destination {} else { precondition(frames <= options.budget.maxFrames) }
        default: break
        }
    } catch {
        precondition(!error.report.contains("\u{1B}"), "a raw escape character in a usage error")
    }
}

/// Media bytes: open → decode → scale → a 1 s loop.
private func fuzzMedia(_ bytes: Data) {

    // Stills: an exact frame at the start, then a keyframe later on (seeks inside the memory reader).
    if let sampler = try? FrameSampler(source: .data(bytes), threads: 1, options: fuzzOptions) {
        _ = try? sampler.frame(at: 0, size: fuzzSize)
        _ = try? sampler.frame(at: 0.5, size: fuzzSize, mode: .aspectFit, accuracy: .keyframe)
    }

    // A short loop: a 1 s window, two passes (the second from the frame cache), decoding on its own thread.
    let configuration = LoopPlayer.Configuration(size: fuzzSize, windowLength: .seconds(1), threads: 1,
                                                  sourceOptions: fuzzOptions)
    if let loop = try? LoopPlayer(source: .data(bytes), configuration: configuration) {
        var frames = 0
        try? loop.run(loops: 2) { frame throws(PreviewLoopError) in
            frames += 1
            precondition(frame.image.width == fuzzSize.width && frame.image.height == fuzzSize.height,
                         "a frame of the wrong size: \(frame.image.width)x\(frame.image.height)")
            precondition(frame.image.pixels.count == fuzzSize.area * 3, "a frame with the wrong byte count")
            // A window that never ends would hang the fuzzer: a 1 s window has far fewer frames.
            if frames > 10_000 { throw PreviewLoopError(.invalidArgument, "too many frames in a 1 s window") }
        }
    }
}
