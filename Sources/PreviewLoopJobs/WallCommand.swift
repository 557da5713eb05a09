import Dispatch
import FoundationEssentials
import Glibc
import PreviewLoop
import Synchronization

/// `preview-loop wall` as a job: its options (declared once, for every front end), checks and work.
struct WallCommand: Equatable, Sendable {
    /// The most inputs one wall takes (each is one loop).
    static let maximumInputs = 256

    /// The videos, one loop each (`<inputs…>`).
    var inputs: [String] = []
    /// `--log` as typed, which becomes ``logDirectory``.
    @Option(WallCommand.log, folded: true) var logOption: String? = nil
    /// Where the per-loop timing logs and the summary go (`--log DIR`).
    var logDirectory = ""
    /// Deliver frames at playback speed (`--realtime`).
    @Flag(WallCommand.realtime) var isRealtime = false
    /// Passes per loop (`--loops`), unless `seconds` is set.
    @Option(WallCommand.loops) var passes = 1
    /// Run every loop this long, in seconds from the wall's start (`--seconds`), instead of passes.
    @Option(WallCommand.seconds) var seconds: Double? = nil
    /// Output size per loop (`--size`).
    @Option(WallCommand.size) var size = Size(width: 320, height: 180)
    /// How the picture fills the frame (`--fit`).
    @Option(PictureOptions.fit) var contentMode = ContentMode.aspectFill
    /// Window start and length, seconds (`--start`, `--length`).
    @Option(WallCommand.start) var start = 0.0
    @Option(WallCommand.length) var length = 15.0
    /// The shared frame-cache budget in MiB (`--cache-budget`).
    @Option(WallCommand.cacheBudget) var cacheBudgetMiB = 256
    /// Decode workers (`--workers`).
    @Option(WallCommand.workers) var workers = PreviewWall.coreCount
    /// Seconds between starting one loop and the next (`--stagger`).
    @Option(WallCommand.stagger) var stagger = 0.0
    /// What to do with a realtime loop that would make others late (`--admission`).
    @Option(WallCommand.admissionOption) var admission = WallAdmissionChoice.always
    /// Whether each loop's window is checked for photosensitive flashes (`--flash-safety`).
    @Option(WallCommand.flashSafety) var flashSafety = WallCommand.flashSafety.defaultValue
    /// Which frames every loop deinterlaces (`--deinterlace`).
    @Option(InputOptions.deinterlace) var deinterlacing = InputOptions.deinterlace.defaultValue
    /// Seconds allowed for opening and for each read (`--timeout`).
    @Option(InputOptions.timeout) var timeout = 30.0
    /// `--insecure`, `--ca-file`.
    var tls = TLSOptions()
}

extension WallCommand {
    /// Every loop's configuration: size, fit, window, clock, timeouts and deinterlacing.
    var loopConfiguration: LoopPlayer.Configuration {
        LoopPlayer.Configuration(
            size: size, contentMode: contentMode, windowStart: .seconds(start),
            windowLength: .seconds(length), clock: isRealtime ? .realtime : .offline,
            sourceOptions: sourceOptions)
    }

    private var sourceOptions: SourceOptions {
        var options = SourceOptions(openTimeout: timeout, readTimeout: timeout, deinterlacing: deinterlacing)
        tls.apply(to: &options)
        return options
    }
}

/// `--admission`.
enum WallAdmissionChoice: String, CaseIterable, Sendable {
    case always, refuse, reduce

    var admission: WallAdmission {
        switch self {
        case .always: .always
        case .refuse: .refuseWhenBusy
        case .reduce: .reduceFrameRateWhenBusy
        }
    }
}

extension WallCommand: ParsableCommand {
    /// `preview-loop wall`: its name, summary and arguments.
    static let configuration = CommandConfiguration(
        name: "wall",
        abstract: "Play many loops at once in one process (one shared frame-cache budget, a bounded pool of "
            + "decode workers), writing one timing log per loop and a summary over all of them.",
        arguments: [PositionalArgument(name: "inputs", abstract: "The videos to loop at once, one loop each (files or http(s) URLs; the same "
                    + "video may be given more than once), 1 to \(WallCommand.maximumInputs).", repeats: true)])

    var input: String { "wall" }

    func run(in context: CommandContext) -> Int32 {
        CommandFailure.reporting(for: "wall") { try WallRun(options: self).run() }
    }
}

extension WallCommand {
    /// `--flash-safety <check|off>`: render's option, without `avoid` (each loop plays the window given).
    static let flashSafety = ValueOption<FlashSafety>.choice(
        "flash-safety", value: "mode",
        help: "check: analyse each loop's window as it first plays (the frames presented, then on repeat through its "
            + "seam) for photosensitive flashes (WCAG 2.3.1) and report a warning line on standard error for an "
            + "extended_failure or failure, and a count in the summary line; the loops play either way. off: no "
            + "analysis. avoid is render's: a wall plays the windows given.",
        default: .check, among: [.check, .off])

    static let log = ValueOption<String?>.path(
        "log", value: "dir",
        help: "Write each loop's CSV timing log (the 'loop --log' format) as DIR/NNN-<name>.csv and the "
            + "'timing' summary over all of them as DIR/summary.txt; created if missing. Each file is "
            + "written whole when its loop ends.",
        required: true, completing: .directory)
    static let realtime = FlagOption(
        "realtime",
        help: "Deliver frames at playback speed, late frames dropped and counted; without it frames "
            + "are delivered as fast as the workers decode.")
    static let loops = ValueOption<Int>.integer(
        "loops", help: "Passes over each loop's window, 1 to 1000000. Not with --seconds.", default: 1, in: 1...1_000_000)
    static let seconds = ValueOption<Double?>(
        "seconds", value: "s",
        help: "Instead of passes, loop every input until this many seconds after the wall started "
            + "(above 0, at most 86400), then stop them all.",
        default: nil, showing: nil, expecting: "seconds above 0 and at most 86400") { text in
        DecimalText.number(text).flatMap { $0 > 0 && $0 <= 86_400 ? .some($0) : nil }
    }
    static let size = ValueOption<Size>(
        "size", short: "s", value: "WxH", help: "Each loop's picture size in pixels, WxH exactly, 1 to 16384 a side.",
        default: Size(width: 320, height: 180), showing: "320x180",
        expecting: "WIDTHxHEIGHT in pixels, each 1 to 16384, for example 320x180") { Size(parsing: $0) }
    static let start = ValueOption<Double>.seconds(
        "start", help: "Where each window starts: seconds (12.5), mm:ss or hh:mm:ss.ms.", default: 0, showing: "0",
        allowsZero: true)
    static let length = ValueOption<Double>.seconds(
        "length", help: "How long each window lasts, in the same forms; cut at the clip's end. Above 0.",
        default: 15, showing: "15", allowsZero: false)
    static let cacheBudget = ValueOption<Int>.integer(
        "cache-budget", value: "MiB",
        help: "The frame-cache budget all loops share, 0 to 65536 MiB: later passes replay cached "
            + "frames; when it is full the least recently used loop cache is evicted and that loop "
            + "decodes again.",
        default: 256, in: 0...65_536)
    static let workers = ValueOption<Int>.integer(
        "workers", help: "Decode worker threads shared by all loops, 1 to 64 (plus one presenter thread).",
        default: PreviewWall.coreCount, in: 1...64, showing: "cores")
    static let stagger = ValueOption<Double>(
        "stagger", value: "s", help: "Seconds between starting one loop and the next, 0 to 60.",
        default: 0, showing: "0", expecting: "seconds from 0 to 60") { text in
        DecimalText.number(text).flatMap { $0 >= 0 && $0 <= 60 ? $0 : nil }
    }
    static let admissionOption = ValueOption<WallAdmissionChoice>.choice(
        "admission", value: "policy",
        help: "always (start every loop; drops are counted), refuse (refuse a realtime loop the "
            + "measured decode cost says would make others late) or reduce (start it at 1/2, 1/3 or "
            + "1/4 of its frame rate when that fits, else refuse). A refused loop is reported on "
            + "stderr and fails the run.",
        default: .always)

    /// Takes the inputs and the log directory.
    mutating func takeArguments(_ arguments: ScannedArguments) throws(UsageError) {
        let inputs = arguments.positionals
        guard !inputs.isEmpty else {
            throw UsageError(.missingInput, subcommand: Self.subcommand, "Missing expected argument '<inputs…>' (one or more videos).")
        }
        guard inputs.count <= Self.maximumInputs else {
            throw UsageError(.invalidValue(option: "inputs", value: String(inputs.count)), subcommand: Self.subcommand,
                             "\(inputs.count) inputs is more than a wall takes (at most \(Self.maximumInputs) loops).")
        }
        if inputs.contains(where: \.isEmpty) {
            throw UsageError(.missingInput, subcommand: Self.subcommand, "An input is an empty string.")
        }
        guard let log = try arguments.value(Self.log) else {
            throw UsageError(.missingOption("log"), subcommand: Self.subcommand,
                             "Missing expected option '--log <dir>' (where the timing logs go).")
        }
        (self.inputs, logDirectory) = (inputs, log)
    }

    /// Whether the values, each valid on its own, go together.
    func validate() throws(UsageError) {
        if $passes.isGiven && $seconds.isGiven {
            throw UsageError(.conflictingOptions("loops", "seconds"), subcommand: Self.subcommand,
                             "'--loops' and '--seconds' both say when to stop; give one.")
        }
    }
}

/// `preview-loop wall`: many loops at once on one ``PreviewWall``, one timing log per loop and one
/// summary over all of them.
///
/// An input that cannot be opened (or a loop that fails later) is reported in one `Error:` line and
/// gets no log; the other loops run on, and the exit status is 1 at the end.
struct WallRun {
    var options: WallCommand

    /// One loop of the run.
    private final class Entry: Sendable {
        let input: String
        let logPath: String
        let recorder: LoopRecorder
        /// Seconds from the wall's start to the loop's clock start (its first frame's due time).
        let clockOffset = Mutex<Double?>(nil)
        /// With `--flash-safety check`: the first pass's frames as presented, and the last one's time.
        let flashes = Mutex((check: LoopFlashCheck(framesPerSecond: 0), last: 0.0))
        let checksFlashes: Bool
        init(input: String, logPath: String, recorder: LoopRecorder, checksFlashes: Bool) {
            self.input = input
            self.logPath = logPath
            self.recorder = recorder
            self.checksFlashes = checksFlashes
        }

        /// Adds a presented frame of the first pass to the check.
        func checkFlashes(_ frame: VideoFrame) {
            guard checksFlashes, frame.loopIndex == 0 else { return }
            let sample = FlashSample(frame.image)
            let time = frame.presentationTime.seconds
            flashes.withLock { state in
                state.check.add(sample, at: time)
                state.last = max(state.last, time)
            }
        }

        /// The first pass's verdicts, played on repeat through its seam (`length`: the window, cut where
        /// the last frame stops showing, `interval` after it); `nil` without the check or before a frame.
        func flashReport(length: Double, interval: Double) -> FlashReport? {
            guard checksFlashes else { return nil }
            return flashes.withLock { state in
                state.check.isEmpty ? nil : state.check.report(playTime: min(length, state.last + interval))
            }
        }
    }

    func run() throws -> Int32 {
        let directory = options.logDirectory
        let createdDirectory = try AtomicFile.createDirectory(directory)
        let debug = getenv("PREVIEW_LOOP_DEBUG_COUNTS") != nil
        let threadsBefore = Self.threadCount()
        let objectsBefore = PreviewWall.liveFFmpegObjects

        let configuration = options.loopConfiguration
        var wall: PreviewWall? = try PreviewWall(configuration: .init(cacheBudget: options.cacheBudgetMiB << 20,
                                                                      workers: options.workers))
        let stopAll = Mutex<(handles: [WallLoopHandle], signal: Int32?)>(([], nil))
        let wake = DispatchSemaphore(value: 0)
        // Weak: the wall's threads end when `wall` is let go below, before the watcher is.
        let watcher = SignalWatcher { [weak opening = wall] signal in
            let handles = stopAll.withLock { state -> [WallLoopHandle] in
                if state.signal == nil { state.signal = signal }
                return state.handles
            }
            // A loop still opening its input (a stalled server) is interrupted too, not waited for.
            opening?.interruptOpenings()
            for handle in handles { handle.stop() }
            wake.signal()
        }
        defer { watcher.cancel() }

        let clock = ContinuousClock()
        let began = clock.now
        let deadline = options.seconds.map { began + .seconds($0) }
        var started: [(entry: Entry, handle: WallLoopHandle)] = []
        var failures = 0
        var peakThreads = threadsBefore
        var peakWallThreads = 0
        for (number, input) in options.inputs.enumerated() {
            if number > 0 && options.stagger > 0 {
                _ = wake.wait(timeout: .now() + options.stagger)
            }
            if stopAll.withLock({ $0.signal != nil }) { break }
            if let deadline, clock.now >= deadline {
                Console.writeError("wall: \(options.inputs.count - number) of \(options.inputs.count) inputs not started: "
                                   + "--seconds ended first\n")
                break
            }
            let path = directory + "/" + Self.logName(number: number + 1, input: input)
            let log: TimingLog
            do {
                log = try TimingLog(destination: .file(path))
            } catch {
                for (_, handle) in started { handle.stop() }
                throw error
            }
            let entry = Entry(input: input, logPath: path, recorder: LoopRecorder(log: log, framesDirectory: nil),
                              checksFlashes: options.flashSafety == .check)
            do {
                let handle = try wall!.add(
                    source: Source(argument: input), configuration: configuration,
                    loops: options.seconds == nil ? options.passes : nil, admission: options.admission.admission,
                    onFrame: { frame in
                        entry.clockOffset.withLock { offset in
                            if offset == nil { offset = (began.duration(to: clock.now) - frame.timings.wallTime).seconds }
                        }
                        _ = entry.recorder.record(frame)
                        entry.checkFlashes(frame)
                    })
                if handle.frameRateDivisor > 1 {
                    Console.writeError("wall: \(input): started at 1/\(handle.frameRateDivisor) of its frame rate (admission)\n")
                }
                stopAll.withLock { $0.handles.append(handle) }
                started.append((entry, handle))
            } catch {
                entry.recorder.discardLog()
                // Interrupted by the signal while opening: the signal's line says it, not a failure.
                if stopAll.withLock({ $0.signal != nil }) { break }
                failures += 1
                Console.writeError(CommandFailure.errorLine(for: error, input: input) + "\n")
            }
            peakThreads = max(peakThreads, Self.threadCount())
            if debug { peakWallThreads = max(peakWallThreads, Self.threadCount(namedWith: "Wall ")) }
        }
        if let deadline {
            while clock.now < deadline, stopAll.withLock({ $0.signal == nil }) {
                _ = wake.wait(timeout: .now() + min(0.5, clock.now.duration(to: deadline).seconds))
            }
            for (_, handle) in started { handle.stop() }
        }
        for (entry, handle) in started {
            do {
                try handle.wait()
            } catch {
                failures += 1
                entry.recorder.discardLog()
                Console.writeError(CommandFailure.errorLine(for: error, input: entry.input) + "\n")
            }
        }
        let elapsed = clock.now - began
        let statistics = wall!.statistics
        wall = nil
        let signal = stopAll.withLock { $0.signal }

        // Logs: each committed whole; then one summary over every row, wall times from the wall's start.
        var combined = TimingLog.header + "\n"
        var loopsLogged = 0
        for (entry, _) in started where entry.recorder.failure == nil {
            guard entry.recorder.counts.frames > 0 else { entry.recorder.discardLog(); continue }
            try entry.recorder.commitLog()
            loopsLogged += 1
            let offset = entry.clockOffset.withLock { $0 } ?? 0
            if let data = FileSystem.contents(of: entry.logPath) {
                combined += Self.shifted(String(decoding: data, as: UTF8.self), by: offset)
            }
        }
        for (entry, _) in started {
            if let failure = entry.recorder.failure {
                failures += 1
                Console.writeError(CommandFailure.errorLine(for: failure, input: entry.input) + "\n")
            }
        }
        if loopsLogged == 0 {
            if createdDirectory { FileSystem.rmdir(directory) }
            if let signal { return ExitStatus.interrupted(by: signal) }
            throw PreviewLoopError(.invalidArgument, "no loop presented a frame (\(failures) of \(options.inputs.count) failed)")
        }
        // Each loop's window as it first played, on repeat through its seam.
        var flashing = 0, checked = 0
        for (entry, handle) in started {
            guard let report = entry.flashReport(length: options.length, interval: handle.info.frameInterval) else { continue }
            checked += 1
            if let warning = RenderRun.flashWarning(report, output: entry.input, written: "its loop plays anyway") {
                flashing += 1
                Console.writeWarning(warning)
            }
        }
        let summary = try TimingSummary(csv: combined).text
        try AtomicFile.write(Array(summary.utf8), to: directory + "/summary.txt")
        Console.writeOutput(summary)
        let total = statistics.total
        Console.writeError("wall: \(loopsLogged) loop\(loopsLogged == 1 ? "" : "s") logged"
            + (failures > 0 ? ", \(failures) failed" : "") + ", \(total.framesPresented) frames, \(total.framesDropped) dropped, "
            + "\(Format.fixed(Format.seconds(elapsed), 3)) s; cache peak \(Format.fixed(Double(statistics.cachePeakBytes) / 1_048_576, 1)) "
            + "of \(options.cacheBudgetMiB) MiB, \(statistics.cacheEvictions) evictions; threads: \(statistics.workers) decode workers "
            + "+ 1 presenter, process peak \(peakThreads)"
            + (checked > 0 ? "; flashes: \(flashing) of \(checked) loop\(checked == 1 ? "" : "s") extended_failure or failure" : "")
            + (signal != nil ? ", interrupted" : "") + "\n")
        if debug {
            Console.writeError("debug: threads before \(threadsBefore), peak \(peakThreads), after \(Self.threadCount()); "
                + "wall threads peak \(peakWallThreads), after \(Self.threadCount(namedWith: "Wall ")); "
                + "live FFmpeg objects before \(objectsBefore), after \(PreviewWall.liveFFmpegObjects)\n")
        }
        return failures > 0 ? ExitStatus.failure : ExitStatus.success
    }

    /// `NNN-<name>.csv`: the input's position from 1 and its last path component, with anything but
    /// letters, digits, `.`, `-` and `_` replaced by `_` (at most 64 characters).
    static func logName(number: Int, input: String) -> String {
        let last = input.split(separator: "/").last.map(String.init) ?? "input"
        let safe = String(last.prefix(64).map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        return DecimalText.zeroPadded(number, 3) + "-" + (safe.isEmpty || safe.allSatisfy({ $0 == "." }) ? "input" : safe) + ".csv"
    }

    /// A log's rows (header dropped) with `wall_time` moved by `offset` seconds.
    static func shifted(_ log: String, by offset: Double) -> String {
        var text = ""
        for line in log.split(separator: "\n").dropFirst() {
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if fields.count > 3, let wall = DecimalText.number(fields[3]) { fields[3] = Format.fixed(wall + offset, 6) }
            text += fields.joined(separator: ",") + "\n"
        }
        return text
    }

    /// Threads in this process now (`/proc/self/task`), or those whose name starts with `prefix`.
    static func threadCount(namedWith prefix: String? = nil) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        guard let prefix else { return tasks.count }
        return tasks.filter { task in
            let name = FileManager.default.contents(atPath: "/proc/self/task/\(task)/comm").map { String(decoding: $0, as: UTF8.self) }
            return name?.hasPrefix(prefix) == true
        }.count
    }
}
