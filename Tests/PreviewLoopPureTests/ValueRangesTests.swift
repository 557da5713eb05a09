import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

/// One number three ways in take: a CLI option, a batch recipe key, and the library's own check.
struct SharedRange: CustomTestStringConvertible, Sendable {
    /// The library's exported range.
    var range: ClosedRange<Int>
    /// The command line the option is added to (`--name value` after it).
    var command: [String]
    /// The option's long name.
    var option: String
    /// The recipe's section and key, if a recipe has the number.
    var recipe: (section: String, key: String)?
    /// Whether the library accepts the value (`nil` when no public check takes it alone).
    var library: (@Sendable (Int) -> Bool)?

    var testDescription: String { "\(command[0]) --\(option)" }
}

private func accepts(_ body: () throws -> Void) -> Bool {
    do { try body(); return true } catch { return false }
}

private let image = try! RGBImage(width: 2, height: 2)

private let shared: [SharedRange] = [
    SharedRange(range: ValueRanges.stripCount, command: ["strip", "c.mp4", "-o", "s.jpg"], option: "count",
                recipe: ("strip", "count"), library: { n in accepts { try ContactStrip.Configuration(count: n).validate() } }),
    SharedRange(range: ValueRanges.stripColumns, command: ["strip", "c.mp4", "-o", "s.jpg"], option: "columns",
                recipe: ("strip", "columns"), library: { n in accepts { try ContactStrip.Configuration(columns: n).validate() } }),
    SharedRange(range: ValueRanges.tileGap, command: ["strip", "c.mp4", "-o", "s.jpg"], option: "gap",
                recipe: ("strip", "gap"), library: { n in accepts { try ContactStrip.Configuration(gap: n).validate() } }),
    SharedRange(range: ValueRanges.tileGap, command: ["sheet", "c.mp4", "-o", "s.jpg"], option: "gap",
                recipe: ("sheet", "gap"), library: { n in
                    var configuration = ClipContactSheet.Configuration()
                    (configuration.columns, configuration.rows, configuration.sheetWidth, configuration.gap) = (1, 1, 1280, n)
                    return accepts { try configuration.validate() }
                }),
    SharedRange(range: ValueRanges.sheetMargin, command: ["sheet", "c.mp4", "-o", "s.jpg"], option: "margin",
                recipe: ("sheet", "margin"), library: { n in
                    var configuration = ClipContactSheet.Configuration()
                    (configuration.columns, configuration.rows, configuration.tileWidth, configuration.margin) = (1, 1, 64, n)
                    return accepts { try configuration.validate() }
                }),
    SharedRange(range: ValueRanges.sheetTileWidth, command: ["sheet", "c.mp4", "-o", "s.jpg"], option: "tile-width",
                recipe: ("sheet", "tile_width"), library: { n in
                    var configuration = ClipContactSheet.Configuration()
                    (configuration.columns, configuration.rows, configuration.tileWidth) = (1, 1, n)
                    return accepts { try configuration.validate() }
                }),
    SharedRange(range: ValueRanges.sheetWidth, command: ["sheet", "c.mp4", "-o", "s.jpg"], option: "width",
                recipe: ("sheet", "width"), library: { n in
                    var configuration = ClipContactSheet.Configuration()
                    (configuration.columns, configuration.rows, configuration.gap, configuration.margin, configuration.sheetWidth) = (1, 1, 0, 0, n)
                    return accepts { try configuration.validate() }
                }),
    SharedRange(range: ValueRanges.quality, command: ["thumb", "c.mp4", "-o", "a.jpg"], option: "quality",
                recipe: ("poster", "quality"), library: { n in accepts { _ = try ImageEncoder.encode(image, as: .jpeg, quality: n) } }),
    SharedRange(range: ValueRanges.quality, command: ["strip", "c.mp4", "-o", "s.jpg"], option: "quality",
                recipe: ("strip", "quality"), library: nil),
    SharedRange(range: ValueRanges.quality, command: ["sheet", "c.mp4", "-o", "s.jpg"], option: "quality",
                recipe: ("sheet", "quality"), library: nil),
    SharedRange(range: ValueRanges.quality, command: ["sprites", "c.mp4", "-o", "dir"], option: "quality",
                recipe: ("sprites", "quality"), library: nil),
    SharedRange(range: ValueRanges.quality, command: ["render", "c.mp4", "-o", "p.webp"], option: "quality",
                recipe: ("hover", "quality"), library: nil),
    SharedRange(range: ValueRanges.quality, command: ["card", "c.mp4", "-o", "c.webp"], option: "quality",
                recipe: nil, library: nil),
    SharedRange(range: ValueRanges.framesPerSecond, command: ["render", "c.mp4", "-o", "p.webp"], option: "fps",
                recipe: ("hover", "fps"), library: { n in
                    // Out of range fails before any file is made; in range is not tried (it would write).
                    ValueRanges.framesPerSecond.contains(n) || accepts {
                        _ = try AnimationWriter(path: "/nonexistent/p.webp", format: .webp, size: Size(width: 16, height: 16), framesPerSecond: n)
                    }
                }),
    SharedRange(range: ValueRanges.framesPerSecond, command: ["card", "c.mp4", "-o", "c.webp"], option: "fps",
                recipe: nil, library: nil),
    SharedRange(range: ValueRanges.spriteCount, command: ["sprites", "c.mp4", "-o", "dir"], option: "count",
                recipe: ("sprites", "count"), library: nil),
    SharedRange(range: ValueRanges.shardCount, command: ["batch", "m.jsonl", "-o", "out"], option: "shard-count",
                recipe: nil, library: { n in accepts { _ = try BatchShard(index: 0, count: n) } }),
]

@Suite("The CLI, the batch recipe and the library agree on every range")
struct ValueRangesTests {
    @Test("The option declares the library's range", arguments: shared)
    func declared(_ number: SharedRange) throws {
        let subcommand = try #require(Subcommand(rawValue: number.command[0]))
        let spec = try #require(subcommand.options.first { $0.name == number.option })
        #expect(spec.integerRange == number.range)
    }

    @Test("Each way in accepts the ends and refuses one past them", arguments: shared)
    func endsAndBeyond(_ number: SharedRange) throws {
        for (value, inside) in [(number.range.lowerBound - 1, false), (number.range.lowerBound, true),
                                (number.range.upperBound, true), (number.range.upperBound + 1, false)] {
            // The CLI: out of range is an invalid value for that option; in range may still be refused
            // for another reason (a strip too wide to encode), never as an invalid value.
            let error = UsageError(checking: number.command + ["--\(number.option)", String(value)])
            let isInvalid = error?.kind == .invalidValue(option: number.option, value: String(value))
            #expect(isInvalid == !inside, "CLI \(number.command[0]) --\(number.option) \(value)")
            if !inside {
                #expect(error?.message.contains("expected a whole number from \(number.range.lowerBound) to \(number.range.upperBound)") == true)
            }
            if let (section, key) = number.recipe {
                let json = Array(#"{"\#(section)": {"\#(key)": \#(value)}}"#.utf8)
                var outside = false
                do {
                    _ = try BatchRecipe.parse(json: json)
                } catch {
                    outside = error.message.contains("\(value) is outside \(number.range.lowerBound)–\(number.range.upperBound)")
                }
                #expect(outside == !inside, "recipe \(section).\(key) \(value)")
            }
            if let library = number.library {
                #expect(library(value) == inside, "library \(number.testDescription) \(value)")
            }
        }
    }

    @Test("A sheet's widest picture is WebP's widest")
    func sheetWidthIsWebP() {
        #expect(ValueRanges.sheetWidth.upperBound == ImageFileFormat.maxWebPSide)
    }

    @Test("Every batch recipe key is an option of the command that makes that output, spelled the same",
          arguments: [("poster", "thumb"), ("strip", "strip"), ("sheet", "sheet"), ("sprites", "sprites"), ("hover", "render")])
    func recipeKeysAreOptions(section: String, command: String) throws {
        // The recipe names its keys when it refuses an unknown one.
        var message = ""
        do { _ = try BatchRecipe.parse(json: Array(#"{"\#(section)": {"no_such_key": 1}}"#.utf8)) } catch { message = error.message }
        let known = try #require(message.firstRange(of: "(known: ").map { message[$0.upperBound...].prefix { $0 != ")" } })
        let keys = known.split(separator: ", ").map(String.init)
        #expect(!keys.isEmpty)
        let options = try #require(Subcommand(rawValue: command)).options.map(\.name)
        // A key is the option's name with - as _; a Boolean key defaults to true where the option is --no-KEY;
        // a hover's format is the output's extension (render -o p.webp), as batch names the file.
        for key in keys where !(section == "hover" && key == "format") {
            let name = key.replacingOccurrences(of: "_", with: "-")
            #expect(options.contains(name) || options.contains("no-" + name), "recipe \(section).\(key) is no option of \(command)")
        }
    }
}
