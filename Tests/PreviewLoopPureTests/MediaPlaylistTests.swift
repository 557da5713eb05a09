import PreviewLoop
import Testing

/// The HLS media playlist reader and the ISO 8601 dates of `program_time`; the expected instants are
/// Python's `datetime.fromisoformat(...).timestamp()`.
@Suite("HLS media playlists and program dates")
struct MediaPlaylistTests {
    @Test("Dates with a zone, fractions and offsets", arguments: [
        ("2026-12-07T03:00:00Z", 1_796_612_400.0), ("2026-12-07T04:00:00.250+01:00", 1_796_612_400.25),
        ("2024-02-29T23:59:59-0530", 1_709_270_999.0), ("1969-12-31T23:59:59Z", -1.0),
        ("2026-12-07T03:10:50.885+0000", 1_796_613_050.885),
    ])
    func dates(_ text: String, _ seconds: Double) {
        let parsed = ProgramDate.seconds(text)
        #expect(parsed.map { abs($0 - seconds) < 1e-6 } == true, "\(text): \(String(describing: parsed))")
    }

    @Test("Not dates: no zone, no time, out of range, trailing text", arguments: [
        "2026-12-07", "2026-12-07T03:00:00", "2026-13-07T03:00:00Z", "2026-02-30T03:00:00Z", "2026-12-07T24:00:00Z",
        "2026-12-07T03:00:00Zjunk", "yesterday", "", "2026-12-07T03:00:00+25:00",
    ])
    func notDates(_ text: String) {
        #expect(ProgramDate.seconds(text) == nil, "\(text)")
    }

    @Test("Written back in UTC with milliseconds")
    func text() {
        #expect(ProgramDate.text(1_796_612_400.25) == "2026-12-07T03:00:00.250Z")
        #expect(ProgramDate.text(-1) == "1969-12-31T23:59:59.000Z")
    }

    static let live = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:40
        #EXTINF:2.000000,
        #EXT-X-PROGRAM-DATE-TIME:2026-12-07T03:00:00Z
        seg40.ts
        #EXTINF:1.5,
        seg41.ts
        #EXTINF:2,title
        seg42.ts
        """

    @Test("Segments, sequence numbers and dates carried forward; live until ENDLIST")
    func segments() throws {
        let playlist = try MediaPlaylist(text: Self.live, name: "live.m3u8")
        #expect(playlist.isLive && playlist.targetDuration == 2 && playlist.mediaSequence == 40)
        #expect(playlist.segments.map(\.uri) == ["seg40.ts", "seg41.ts", "seg42.ts"])
        #expect(playlist.segments.map(\.sequenceNumber) == [40, 41, 42])
        #expect(playlist.segments.map(\.programDate) == [1_796_612_400, 1_796_612_402, 1_796_612_403.5])
        #expect(playlist.programDateWindow == 1_796_612_400...1_796_612_405.5)
        let found = try #require(playlist.segment(atProgramDate: 1_796_612_402.75))
        #expect(found.segment.uri == "seg41.ts" && abs(found.offset - 0.75) < 1e-9)
        // A boundary belongs to the later segment; outside the window, none.
        #expect(playlist.segment(atProgramDate: 1_796_612_402)?.segment.uri == "seg41.ts")
        #expect(playlist.segment(atProgramDate: 1_796_612_399.9) == nil)
        #expect(playlist.segment(atProgramDate: 1_796_612_405.6) == nil)
        #expect(try MediaPlaylist(text: Self.live + "\n#EXT-X-ENDLIST\n", name: "vod.m3u8").hasEnded)
    }

    @Test("Not media playlists: another text, a multivariant playlist")
    func refused() {
        #expect(throws: PreviewLoopError.self) { try MediaPlaylist(text: "hello", name: "a") }
        #expect(throws: PreviewLoopError.self) {
            try MediaPlaylist(text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n", name: "a")
        }
    }
}
