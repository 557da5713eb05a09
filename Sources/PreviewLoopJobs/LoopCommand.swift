import Glibc
import PreviewLoop
import Synchronization

/// `preview-loop loop` as a job: its options (declared once, for every front end), checks and work.
struct LoopCommand: Equatable, Sendable {
    /// The work limits (`--max-memory`); declared first, so its option is listed before the input group's.
    var budget = WorkBudget()
    /// The input and how it is read: `<input>`, `--timeout`, `--deadline`, `--threads`, `--allow-redirects`,
    /// `--tonemap` (the input group).
    var source = InputOptions()
    /// Where the window starts (`--start`).
    @Option(WindowOptions.start) var start = WindowOptions.start.defaultValue
    /// How long the window lasts (`--length`).
    @Option(WindowOptions.length) var length = WindowOptions.length.defaultValue
    /// Passes over the window (`--loops`); 0 means until interrupted.
    @Option(LoopCommand.loops) var loops = LoopCommand.loops.defaultValue
    /// The size without `--size`, turned for a portrait source.
    static let defaultBox = Size(width: 320, height: 180)
    /// The frame size (`-s`, `--size`).
    @Option(LoopCommand.size) var size = LoopCommand.size.defaultValue
    /// How the picture fills the size (`--fit`).
    @Option(PictureOptions.fit) var contentMode = PictureOptions.fit.defaultValue
    /// Whether frames are paced at playback speed (`--realtime`) rather than decoded flat out.
    @Flag(LoopCommand.realtime) var isRealtime = false
    /// Where the CSV timing log goes (`--log`), if anywhere.
    @Option(LoopCommand.log) var log: LogDestination? = nil
    /// The directory every frame is written to (`--frames`), if any.
    @Option(LoopCommand.frames) var framesDirectory: String? = nil
    /// Loop-relative wall times (seconds) at which to write a still of the frame presented (`--capture-at`).
    @Option(LoopCommand.captureAt) var captureTimes: [Double] = []
    /// The wall-time span (seconds, from the loop's start) whose frames are recorded (`--record FROM-TO`).
    @Option(LoopCommand.record) var recordSpan: Range<Double>? = nil
    /// Where captures and recordings go (`--capture-dir`); `nil` means the `--frames` directory.
    @Option(LoopCommand.captureDir) var captureDirectory: String? = nil
    /// `--format` as typed, which becomes ``imageFormat``.
    @Option(LoopCommand.format, folded: true) var formatOption: ImageFileFormat? = nil
    /// The format of frames, captures and recordings (`--format`): PPM, PNG or JPEG.
    var imageFormat = ImageFileFormat.ppm
    /// Whether one JSON record (the batch record's schema) replaces the summary line (`--json`).
    @Flag(ReportOptions.json) var json = false
    /// Progress and quiet (`--progress`, `--quiet`).
    var reporting = ReportingOptions()
}

extension LoopCommand: ClipCommand, ReportsProgress {
    /// `preview-loop loop`: its name, summary, arguments and the group options it leaves out.
    static let configuration = CommandConfiguration(
        name: "loop",
        abstract: "Play a window of a video in a loop, writing frames and a timing log.",
        arguments: [.input],
        hiding: [WorkBudget.maxFrames])

    func run(in context: CommandContext) -> Int32 {
        let report = json ? ClipReport(command: Self.subcommand, input: source.input) : nil
        return CommandFailure.reporting(for: source, report: report) { try LoopRun(options: self, report: report).run() }
    }
}

extension LoopCommand {
    /// `--loops <n>`.
    static let loops = ValueOption<Int>.integer(
        "loops", help: "Passes over the window; 0 loops until interrupted (Ctrl-C or SIGTERM), "
            + "then finishes the log and exits 0.",
        default: 1, in: 0...Int.max)
    /// `-s, --size <WxH>`.
    static let size = PictureOptions.size(default: defaultBox)
    /// `--realtime`.
    static let realtime = FlagOption("realtime",
                               help: "Deliver frames at playback speed; without it frames are decoded as fast as "
                                   + "possible and lateness is not measured.")
    /// `--log <file>`, `-` for standard output.
    static let log = ValueOption<LogDestination?>(
        "log", value: "file",
        help: "Write a CSV timing log (pass, index, presentation_time, wall_time, decode_ms, "
            + "scale_ms, lateness_ms, dropped) to the file when the loop ends, or to standard output as "
            + "it runs with '-'; s3://BUCKET/KEY uploads it to an S3 bucket when the loop ends.",
        default: nil, showing: nil, expecting: "a non-empty path", completing: .path) { text in
        text.isEmpty ? nil : text == "-" ? .standardOutput : .file(text)
    }
    /// `--frames <dir>`.
    static let frames = ValueOption<String?>.path(
        "frames", value: "dir",
        help: "Write every frame to the directory as PPP-FFFFF.ppm (pass and frame number, from 1; .png or .jpg "
            + "with --format); created if missing.",
        completing: .directory)
    /// `--capture-at <times>`: wall times in seconds from the loop's start (no percentages), sorted.
    static let captureAt = ValueOption<[Double]>(
        "capture-at", value: "times",
        help: "Write a still of the frame presented at each of these times from the loop's "
            + "start (comma-separated; seconds, mm:ss or hh:mm:ss.ms) as capture-NN.ppm.",
        default: [], showing: nil, expecting: "times from the loop's start, comma-separated (2.5,00:10)") { text in
        let times = text.split(separator: ",", omittingEmptySubsequences: false).map { wallTime(String($0)) }
        return times.contains(nil) ? nil : times.compactMap { $0 }.sorted()
    }
    /// `--record <from-to>`: a wall-time span from the loop's start, FROM before TO.
    static let record = ValueOption<Range<Double>?>(
        "record", value: "from-to",
        help: "Record every frame presented in this span of time from the loop's start as "
            + "record-PPP-FFFFF.ppm, across seams.",
        default: nil, showing: nil, expecting: "FROM-TO, two times from the loop's start (2-5, 00:02-00:05.5)") { text in
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, let from = wallTime(parts[0]), let to = wallTime(parts[1]), from < to else { return nil }
        return .some(from..<to)
    }
    /// `--capture-dir <dir>`.
    static let captureDir = ValueOption<String?>.path(
        "capture-dir", value: "dir",
        help: "Where --capture-at and --record write (default: the --frames directory); created if missing.",
        completing: .directory)

    /// `--format <format>`: of frames, captures and recordings.
    static let format = OutputOptions.format(
        among: [.ppm, .png, .jpeg], help: "The image format of --frames, --capture-at and --record files (jpg at quality 85).",
        showing: "ppm")

    /// A wall time: seconds, mm:ss or hh:mm:ss.ms — a percentage means nothing for wall time.
    private static func wallTime(_ text: String) -> Double? {
        if case .seconds(let value)? = TimePosition(parsing: text) { return value }
        return nil
    }

    /// Takes the input, and the frames' format.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        source.input = try arguments.input()
        if let format = try arguments.value(Self.format) { imageFormat = format }
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if $formatOption.isGiven, framesDirectory == nil && captureTimes.isEmpty && recordSpan == nil {
            throw UsageError(.conflictingOptions("format", "frames"), subcommand: Self.subcommand,
                             "'--format' sets the format of '--frames', '--capture-at' and '--record' files; give one of them.")
        }
        if (!captureTimes.isEmpty || recordSpan != nil) && captureDirectory == nil && framesDirectory == nil {
            throw UsageError(.missingOption("capture-dir"), subcommand: Self.subcommand,
                             "'--capture-at' and '--record' need '--capture-dir <dir>' (or '--frames <dir>').")
        }
        if json && log == .standardOutput {
            throw UsageError(.conflictingOptions("json", "log"), subcommand: Self.subcommand,
                             "'--json' prints its record on standard output, where '--log -' writes the log; write the log to a file.")
        }
        try ScannedArguments.refuse(size.knownSizes.lazy.compactMap(sizeRefusal).first, for: Self.subcommand)
    }

    /// Why a loop at `size` is refused before decoding; `nil` when it fits.
    func sizeRefusal(_ size: Size) -> WorkBudget.Refusal? {
        // Frames in flight between the decoder and the consumer, the scaler's and the writer's copies.
        budget.memoryRefusal(12 * WorkBudget.rgb(size), what: "A loop at \(size)").map { .init(option: "max-memory", message: $0) }
    }
}

/// Where `preview-loop loop` writes its timing log.
enum LogDestination: Equatable, Sendable {
    /// `--log -`: standard output, line by line.
    case standardOutput
    /// `--log FILE`: a file, written whole when the loop ends.
    case file(String)
}

/// `preview-loop loop`: plays a window of the video in a loop, optionally writing every frame and a
/// CSV timing log, until the passes are done or SIGINT/SIGTERM stops it.
///
/// Outputs are never left half-written: each frame file is written atomically, the log file appears
/// only when the loop ends well (or is interrupted after its first frame). A second signal exits at
/// once, removing the unfinished log.
struct LoopRun {
    /// The parsed options.
    var options: LoopCommand
    /// With `--json`: what was done, printed as one batch record instead of the summary line.
    var report: ClipReport? = nil

    /// Runs the loop and prints a summary line on standard error.
    ///
    /// - Returns: 0, or 128 + the signal's number when a signal stopped the loop before its first frame.
    func run() throws -> Int32 {
        let source = options.source.source
        // The window goes to the library as given: a percentage is resolved there, from the input it
        // opens (standard input cannot be read twice).
        let configuration = LoopPlayer.Configuration(
            contentMode: options.contentMode,
            windowStart: options.start, windowLength: options.length,
            clock: options.isRealtime ? .realtime : .offline, threads: options.source.threads,
            sourceOptions: options.source.sourceOptions)
        // One watcher for the whole command (libdispatch installs its signal handler once per process, so
        // a second watcher after a first one was cancelled would not see the signal). While the input opens
        // (a slow server, a silent pipe) there is nothing to stop: a signal ends the command at once, as
        // it does thumb's; later the first one stops the loop and a second one (the user insists) ends it
        // at once, leaving no partial log behind.
        let stopper = LoopStopper()
        let isOpening = Atomic<Bool>(true)
        let temporaryLogPath = Mutex<String?>(nil)
        let input = options.source.input, report = report
        let watcher = SignalWatcher { signal in
            let isFirst = stopper.interrupt(by: signal)
            guard !isFirst || isOpening.load(ordering: .acquiring) else { return }
            SignalCleanup.exit(interruptedBy: signal, input: input, report: report,
                               errorLine: isFirst ? nil : "Error: \(input): interrupted again, stopping at once") {
                if let path = temporaryLogPath.withLock({ $0 }) { FileSystem.unlink(path) }
            }
        }
        let loop = try LoopPlayer(source: source, configuration: configuration, sizeRequest: options.size)
        isOpening.store(false, ordering: .releasing)
        try WorkLimitError.check(options.sizeRefusal(loop.configuration.size))
        if let warning = loop.info.colorWarning { Console.writeWarning(warning) }
        report?.opened(loop.info)

        let createdDirectory = try options.framesDirectory.flatMap(Self.createDirectory)
        let captureDirectory = options.captureDirectory ?? options.framesDirectory
        var createdCaptureDirectory: String?
        if let captureDirectory, captureDirectory != options.framesDirectory,
           !options.captureTimes.isEmpty || options.recordSpan != nil {
            createdCaptureDirectory = try Self.createDirectory(captureDirectory)
        }
        let log: TimingLog?
        do {
            log = try options.log.map { try TimingLog(destination: $0) }
        } catch {
            if let createdDirectory { FileSystem.rmdir(createdDirectory) }
            throw error
        }
        temporaryLogPath.withLock { $0 = log?.temporaryPath }
        let recorder = LoopRecorder(log: log, framesDirectory: options.framesDirectory,
                                    shutter: LoopRecorder.Shutter(captureTimes: options.captureTimes, recordSpan: options.recordSpan,
                                                                  directory: captureDirectory),
                                    format: options.imageFormat)

        // Progress for an offline loop (a realtime one takes the time it takes): frames counted, the
        // percent and ETA from the passes done and the position in the window (frames per pass are only
        // known once a pass ends); no total for a loop until interrupted.
        let display = ProgressDisplay(label: "loop", unit: "frames", rateUnit: "fps",
                                      style: options.isRealtime ? .off : options.reporting.progressStyle)
        defer { display.abandon() }
        let passes = options.loops
        let windowLength = loop.info.duration.map { min(loop.windowLength.seconds, max(0, $0 - loop.windowStart.seconds)) }
            ?? loop.windowLength.seconds
        let frameRate = loop.info.frameRate?.doubleValue ?? 0
        let expectedFrames = passes > 0 && frameRate > 0 ? Int((Double(passes) * windowLength * frameRate).rounded()) : nil
        let clock = ContinuousClock()
        let began = clock.now
        let handle = loop.start(loops: options.loops == 0 ? nil : options.loops, onFrame: { frame in
            if !recorder.record(frame) { stopper.stop() }
            guard display.style != .off else { return }
            let completed = recorder.counts.frames
            let fraction = passes > 0 && windowLength > 0
                ? (Double(frame.loopIndex) + min(1, frame.presentationTime.seconds / windowLength)) / Double(passes) : nil
            display.update(completed: completed, total: expectedFrames.map { max($0, completed) }, fraction: fraction)
        }, onCompletion: { _ in })
        stopper.attach(handle)
        var loopError: (any Error)?
        do {
            try handle.wait()
        } catch {
            loopError = error
        }
        let elapsed = clock.now - began
        watcher.cancel()

        let counts = recorder.counts
        func abandon() {
            recorder.discardLog()
            if let createdDirectory, counts.frames == 0 { FileSystem.rmdir(createdDirectory) }
        }
        if let failure = recorder.failure {
            abandon()
            throw failure
        }
        if let loopError, !(stopper.isStopRequested && (loopError as? PreviewLoopError)?.code == .cancelled) {
            abandon()
            throw loopError
        }
        let signal = stopper.interruptingSignal
        if let signal, counts.frames == 0 {
            abandon()
            report?.printInterruption(by: signal)
            Console.writeError("loop: interrupted before the first frame\n")
            return ExitStatus.interrupted(by: signal)
        }
        // Captures and recordings the loop never reached are reported, not passed over in silence.
        let outcome = recorder.shutterOutcome
        var missed: [String] = []
        if !outcome.missedCaptures.isEmpty {
            missed.append("--capture-at \(outcome.missedCaptures.map { Format.fixed($0, 3) }.joined(separator: ", ")) s")
        }
        if let span = options.recordSpan, outcome.recorded == 0 {
            missed.append("--record \(Format.fixed(span.lowerBound, 3))-\(Format.fixed(span.upperBound, 3)) s")
        }
        if !missed.isEmpty {
            let reason = "not captured: \(missed.joined(separator: " and ")); the loop presented frames for "
                + "\(Format.fixed(Format.seconds(elapsed), 3)) s of wall time"
                + (options.isRealtime ? "" : " (without --realtime frames are decoded as fast as possible)")
            if signal == nil {
                abandon()
                if let createdCaptureDirectory { FileSystem.rmdir(createdCaptureDirectory) }
                throw PreviewLoopError(.invalidArgument, reason)
            }
            if !Console.isQuiet { Console.writeError("loop: \(reason)\n") }
        }
        try recorder.commitLog()
        display.finish(completed: counts.frames, total: signal == nil && passes > 0 ? counts.frames : nil)
        if let report {
            if case .file(let path)? = options.log {
                var log = ClipReport.output("timing_log", path)
                log.frames = counts.frames
                report.add(log)
            }
            if let directory = options.framesDirectory, counts.frames > 0 {
                var frames = ClipReport.output("loop_frames", directory, width: loop.configuration.size.width,
                                               height: loop.configuration.size.height)
                frames.frames = counts.frames
                report.add(frames)
            }
            if let captureDirectory, captureDirectory != options.framesDirectory,
               options.captureTimes.count > outcome.missedCaptures.count || outcome.recorded > 0 {
                var captures = ClipReport.output("capture_frames", captureDirectory)
                captures.frames = options.captureTimes.count - outcome.missedCaptures.count + outcome.recorded
                report.add(captures)
            }
            report.addTiming("loop", milliseconds: Format.seconds(elapsed) * 1000)
            try report.print(requiresOutput: false)
            return ExitStatus.success
        }
        if Console.isQuiet { return ExitStatus.success }
        Console.writeError(Self.summary(frames: counts.frames, passes: counts.passes, elapsed: elapsed,
                                        rate: recorder.deliveredRate, isInterrupted: signal != nil) + "\n")
        return ExitStatus.success
    }

    /// Creates the frames directory and any missing parents.
    ///
    /// - Returns: the directory when this call created it (to remove it again if nothing is written).
    /// - Throws: `PreviewLoopError(.outputNotWritable)` when it cannot be created or is a file.
    static func createDirectory(_ path: String) throws -> String? {
        try AtomicFile.createDirectory(path) ? path : nil
    }

    /// `loop: 450 frames, 2 passes, 15.012 s, 29.98 fps` (and `, interrupted`): the seconds are the
    /// run's wall time (opening included), the fps ``LoopRecorder/deliveredRate`` (first to last
    /// hand-over, as `timing` computes it from the log).
    static func summary(frames: Int, passes: Int, elapsed: Duration, rate: Double, isInterrupted: Bool) -> String {
        let seconds = Format.seconds(elapsed)
        return "loop: \(frames) frame\(frames == 1 ? "" : "s"), \(passes) pass\(passes == 1 ? "" : "es"), "
            + "\(Format.fixed(seconds, 3)) s, \(Format.fixed(rate, 2)) fps" + (isInterrupted ? ", interrupted" : "")
    }
}
