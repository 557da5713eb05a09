internal import PreviewLoopRemote

/// An HLS media playlist (RFC 8216) as live previews read it: its segments in order, where each starts
/// on the wall clock (`#EXT-X-PROGRAM-DATE-TIME`), and whether it has ended (`#EXT-X-ENDLIST`).
///
/// Only the tags that place segments are read; the rest are skipped. A multivariant (master) playlist
/// is refused: its renditions are other playlists, not segments.
package struct MediaPlaylist: Sendable, Hashable {
    /// One segment: its URI as written, its duration and where it starts.
    package struct Segment: Sendable, Hashable {
        /// The URI as the playlist writes it (relative to the playlist, usually).
        package var uri: String
        /// `#EXTINF`'s duration, in seconds.
        package var duration: Double
        /// Its media sequence number.
        package var sequenceNumber: Int
        /// When its first frame was on the wall clock, in seconds since 1970-01-01T00:00:00Z: its own
        /// `#EXT-X-PROGRAM-DATE-TIME`, or the last one before it plus the durations in between; `nil`
        /// when no tag comes before it.
        package var programDate: Double?
    }

    /// The segments, oldest first.
    package var segments: [Segment]
    /// `#EXT-X-TARGETDURATION`, in seconds, if given.
    package var targetDuration: Double?
    /// `#EXT-X-MEDIA-SEQUENCE` (0 when absent).
    package var mediaSequence: Int
    /// Whether `#EXT-X-ENDLIST` closes it: no segment will be added.
    package var hasEnded: Bool

    /// Whether it may still grow (no `#EXT-X-ENDLIST`).
    package var isLive: Bool { !hasEnded }

    /// The newest segment, if any.
    package var newest: Segment? { segments.last }

    /// Whether `bytes` begin as a playlist does (`#EXTM3U`, after an optional byte order mark).
    package static func looksLikePlaylist(_ bytes: some Collection<UInt8>) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.starts(with: Array("#EXTM3U".utf8))
    }

    /// Reads a media playlist's text; `name` names it in errors.
    ///
    /// - Throws: `.notMediaFile` when the text is not an M3U8 playlist or is a multivariant one.
    package init(text: String, name: String) throws(PreviewLoopError) {
        guard Self.looksLikePlaylist(Array(text.utf8.prefix(16))) else {
            throw PreviewLoopError(.notMediaFile, "\(name): not an HLS playlist (it does not begin with #EXTM3U)")
        }
        segments = []
        targetDuration = nil
        mediaSequence = 0
        hasEnded = false
        var pendingDuration: Double?
        var pendingDate: Double?
        var lastDate: Double?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = Self.trimmed(rawLine)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if let value = Self.value(of: "#EXT-X-TARGETDURATION:", in: line) {
                    targetDuration = Double(value)
                } else if let value = Self.value(of: "#EXT-X-MEDIA-SEQUENCE:", in: line) {
                    mediaSequence = Int(value) ?? 0
                } else if let value = Self.value(of: "#EXTINF:", in: line) {
                    let number = value.split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
                    pendingDuration = Double(Self.trimmed(number))
                } else if let value = Self.value(of: "#EXT-X-PROGRAM-DATE-TIME:", in: line) {
                    pendingDate = ProgramDate.seconds(value)
                } else if line.hasPrefix("#EXT-X-ENDLIST") {
                    hasEnded = true
                } else if line.hasPrefix("#EXT-X-STREAM-INF") {
                    throw PreviewLoopError(.notMediaFile, "\(name): a multivariant playlist; give one of its media playlists")
                }
                continue
            }
            // A URI line: the segment the tags before it describe.
            let duration = max(0, pendingDuration ?? 0)
            let date = pendingDate ?? lastDate
            segments.append(Segment(uri: line, duration: duration, sequenceNumber: mediaSequence + segments.count, programDate: date))
            lastDate = date.map { $0 + duration }
            pendingDuration = nil
            pendingDate = nil
        }
    }

    /// `text` without spaces, tabs and carriage returns around it.
    package static func trimmed(_ text: some StringProtocol) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else { return "" }
        return String(text[first...last])
    }

    /// The text after `tag` when `line` starts with it.
    private static func value(of tag: String, in line: String) -> String? {
        line.hasPrefix(tag) ? String(line.dropFirst(tag.count)) : nil
    }

    /// The demuxers a segment may be read with: `allowed` (or the defaults) without the formats that
    /// name other resources, so a segment can never open files of its own.
    package static func segmentFormats(_ allowed: Set<String>?) -> Set<String> {
        (allowed ?? SourceOptions.defaultFormats).subtracting(MediaInput.referencingFormats)
    }

    /// Whether any segment is placed on the wall clock.
    package var hasProgramDates: Bool { segments.contains { $0.programDate != nil } }

    /// The wall-clock span the segments cover, from the first dated segment's start to the last one's
    /// end; `nil` without `#EXT-X-PROGRAM-DATE-TIME`.
    package var programDateWindow: ClosedRange<Double>? {
        let dated = segments.filter { $0.programDate != nil }
        guard let first = dated.first?.programDate, let last = dated.last, let lastStart = last.programDate else { return nil }
        return first...max(first, lastStart + last.duration)
    }

    /// The segment showing the wall-clock time `date` (seconds since 1970) and how far into it, in
    /// seconds; `nil` when no segment covers it. A time on a boundary belongs to the later segment; the
    /// window's very end to the last segment.
    package func segment(atProgramDate date: Double) -> (segment: Segment, offset: Double)? {
        var found: (segment: Segment, offset: Double)?
        for segment in segments {
            guard let start = segment.programDate else { continue }
            if date >= start && date <= start + segment.duration { found = (segment, date - start) }
        }
        return found
    }
}

/// Times as `#EXT-X-PROGRAM-DATE-TIME` and Mux's `program_time` write them: ISO 8601 dates with a time
/// and a zone (`2026-12-07T03:00:00Z`, `2026-12-07T03:00:00.250+01:00`).
package enum ProgramDate {
    /// Seconds since 1970-01-01T00:00:00Z of `text`, or `nil` when it is not a full date, a time
    /// (seconds optional, a fraction allowed) and a zone (`Z`, `±hh:mm`, `±hhmm` or `±hh`).
    package static func seconds(_ text: String) -> Double? {
        let scalars = Array(MediaPlaylist.trimmed(text).utf8)
        guard scalars.count <= 64 else { return nil }
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func take(_ character: Character) -> Bool {
            guard index < scalars.count, scalars[index] == character.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), take("-"), let month = digits(2), take("-"), let day = digits(2),
              take("T") || take("t") || take(" "), let hour = digits(2), take(":"), let minute = digits(2) else { return nil }
        var second = 0.0
        if take(":") {
            guard let whole = digits(2) else { return nil }
            second = Double(whole)
            if take(".") || take(",") {
                let start = index
                while index < scalars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scalars[index]) { index += 1 }
                guard index > start, let fraction = Double("0." + String(decoding: scalars[start..<index], as: UTF8.self)) else { return nil }
                second += fraction
            }
        }
        var zone = 0
        if take("Z") || take("z") {
        } else if index < scalars.count, scalars[index] == UInt8(ascii: "+") || scalars[index] == UInt8(ascii: "-") {
            let sign = scalars[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let zoneHours = digits(2) else { return nil }
            var zoneMinutes = 0
            if index < scalars.count {
                _ = take(":")
                guard let value = digits(2) else { return nil }
                zoneMinutes = value
            }
            guard zoneHours <= 23, zoneMinutes <= 59 else { return nil }
            zone = sign * (zoneHours * 3600 + zoneMinutes * 60)
        } else {
            return nil
        }
        guard index == scalars.count, CivilDate.isValid(year: year, month: month, day: day),
              hour <= 23, minute <= 59, second < 61 else { return nil }
        let days = CivilDate.daysSince1970(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 - zone) + second
    }

    /// `seconds` since 1970 as `2026-12-07T03:00:00.250Z` (milliseconds, UTC).
    package static func text(_ seconds: Double) -> String {
        let milliseconds = Int((seconds * 1000).rounded(.down))
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let inDay = milliseconds - days * 86_400_000
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = inDay % 1000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(year)-\(two(month))-\(two(day))T\(two(inDay / 3_600_000)):\(two(inDay / 60_000 % 60)):\(two(inDay / 1000 % 60)).\(fraction)Z"
    }
}
