import Foundation
import Testing
@testable import PreviewLoop

/// The one JSON writer (`JSONValue`), checked against Foundation's `JSONEncoder` — the writer the
/// batch records and `batch report --json` used before — byte for byte.
@Suite struct JSONValueTests {
    /// `JSONEncoder` set up as `BatchJSON` was (compact records) or as `batch report --json` was (pretty).
    private func foundation(_ value: some Encodable, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A record with every kind of member: nested plan, optionals set and unset, awkward strings and numbers.
    private func awkwardRecord() throws -> BatchRecord {
        let line = """
        {"type":"clip","id":"a-1","command":"strip","input":"/x/\\"quoted\\" \\\\ tab\\t nl\\n bell\\u0007 bs\\b ff\\f é 😀 \\u2028/",
         "status":"failed","skipped":false,"reason":"corrupt_data","permanence":"permanent","message":"line1\\r\\nline2\\u001f",
         "attempts":3,"outputs":[{"kind":"strip","path":"a-1/strip.jpg","bytes":123456,"width":640,"height":90,"time":1e-7,
         "tiles":8,"plan":{"pick":"scenes","tiles":[{"time":0.1,"frame_time":0.08,"reason":"cut","score":0.3333333333333333}],
         "dropped":[{"time":2.5,"frame_time":2.48,"reason":"fill","duplicate_of":0.08,"distance":-0.0}],
         "scan":{"cuts":[{"time":1e16,"score":123456789.125}],"keyframes_decoded":4,"groups":5,"groups_decoded":1,"frames_decoded":30}}},
         {"kind":"poster","path":"p.jpg","bytes":0,"skipped_frames":2,"choice":"best available","duration":4.0,
         "smart_crop":{"x":140,"y":0,"width":360,"height":360,"chosen_by":"faces","faces":2}}],
         "clip":{"duration":4.0,"width":400,"height":300,"display_width":400,"display_height":300,"codec":"h264","rotation":-90,
         "fps":29.97002997002997,"pixel_format":"yuv420p","format":"mov,mp4","hdr":"SDR"},
         "timings":{"open_ms":15.193,"z_ms":1e21,"a_ms":0.000001,"B_ms":100},"shard":"2/10","finished_at":1796137317.1329775,
         "fingerprint":"846af7481b9aa506"}
        """
        var record = try JSONDecoder().decode(BatchRecord.self, from: Data(line.utf8))
        record.timings["inf_ms"] = .infinity
        record.timings["minus_inf_ms"] = -.infinity
        record.timings["nan_ms"] = .nan
        return record
    }

    @Test func recordsAreWrittenAsJSONEncoderWroteThem() throws {
        let record = try awkwardRecord()
        #expect(record.jsonLine() == (try foundation(record)))
        // A record with its optionals unset, as a plain batch success writes it.
        var plain = BatchRecord(id: "short-dd619179", input: "Fixtures/short.mp4", status: .ok, attempts: 1,
                                outputs: [.init(kind: "webvtt", path: "short/thumbnails.vtt", bytes: 66)],
                                timings: ["open_ms": 12.421, "total_ms": 34.264], shard: nil, fingerprint: nil)
        plain.finishedAt = 1796137317.899022
        #expect(plain.jsonLine() == (try foundation(plain)))
        #expect(!plain.jsonLine().contains("shard"), "nil members are left out")
        let summary = BatchSummary(shard: "0/1", records: [record, plain], clips: 3, stoppedBefore: "c", seconds: 0.5)
        #expect(summary.jsonLine() == (try foundation(summary)))
    }

    @Test func smartCropIsOneFlatMemberOfAnImageEntry() throws {
        var output = BatchRecord.Output(kind: "frame", path: "f.png", bytes: 1)
        output.smartCrop = SmartCropChoice(window: Rect(x: 270, y: 0, width: 360, height: 360), basis: .interest)
        let line = try JSONValue(encoding: output).text(.compact)
        #expect(line.contains(#""smart_crop":{"chosen_by":"interest","height":360,"width":360,"x":270,"y":0}"#), "\(line)")
        #expect(try JSONDecoder().decode(BatchRecord.Output.self, from: Data(line.utf8)) == output)
        output.smartCrop?.faces = 0
        #expect(try JSONValue(encoding: output).text(.compact).contains(#""faces":0,"height""#))
        #expect(try awkwardRecord().outputs[1].smartCrop == SmartCropChoice(window: Rect(x: 140, y: 0, width: 360, height: 360),
                                                                            basis: .faces, faces: 2))
    }

    @Test func prettyLayoutIsJSONEncodersPrettyPrinting() throws {
        struct Report: Encodable {
            var counts: [String: Int]
            var empty: [Int]
            var emptyObject: [String: [String]]
            var nested: [String: [String]]
            var numbers: [Double]
            var flag: Bool
            var missing: String?
            var small: Float
            var big: UInt64
        }
        let report = Report(counts: ["b": 2, "a": 1, "_z": 0, "A": 3], empty: [], emptyObject: [:],
                            nested: ["x": [], "y": ["one", "two"]], numbers: [0.1, 1, -0.0, 2.5e-5, 1e300, 3799.01],
                            flag: true, missing: nil, small: 0.1, big: .max)
        #expect(try JSONValue(encoding: report).text(.pretty) == (try foundation(report, pretty: true)))
        #expect(try JSONValue(encoding: report).text(.compact) == (try foundation(report)))
        #expect(try JSONValue(encoding: try awkwardRecord()).text(.pretty) == (try foundation(try awkwardRecord(), pretty: true)))
    }

    @Test func layoutsSortKeysAndSpellNumbersOneWay() {
        let value = JSONValue.object([
            "width": .integer(320), "duration": .numberText("4.0"), "name": .string("a\"b"),
            "light": .object(["max_fall": .integer(400), "max_cll": .integer(1000)]),
            "list": .array([.number(1), .number(0.5), .null, .bool(false)]), "none": .null,
        ])
        #expect(value.text(.compact)
            == #"{"duration":4.0,"light":{"max_cll":1000,"max_fall":400},"list":[1,0.5,null,false],"name":"a\"b","none":null,"width":320}"#)
        #expect(value.text(.inline)
            == #"{"duration": 4.0, "light": {"max_cll": 1000, "max_fall": 400}, "list": [1, 0.5, null, false], "name": "a\"b", "none": null, "width": 320}"#)
        #expect(value.text(.memberPerLine) == """
            {
              "duration": 4.0,
              "light": {"max_cll": 1000, "max_fall": 400},
              "list": [1, 0.5, null, false],
              "name": "a\\"b",
              "none": null,
              "width": 320
            }
            """)
        #expect(JSONValue.array([]).text(.pretty) == "[\n\n]")
        #expect(JSONValue.object(["a": .array([])]).text(.pretty) == "{\n  \"a\" : [\n\n  ]\n}")
        #expect(JSONValue.number(.infinity).text(.compact) == "\"inf\"")
        #expect(!JSONValue.object(["a": .array([.number(.nan)])]).isFinite)
        #expect(JSONValue.object(["a": .array([.number(1), .numberText("null")])]).isFinite)
    }
}
