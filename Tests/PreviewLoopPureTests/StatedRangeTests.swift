import PreviewLoop
@testable import PreviewLoopCLI
@testable import PreviewLoopJobs
import Testing

/// The integer ranges a text states (`1 to 1000`), without the percentages of a time (`from 0 to 100 (10%)`).
private func statedRanges(in text: String) -> [ClosedRange<Int>] {
    text.matches(of: /(\d[\d,]*) to (\d[\d,]*)/).compactMap { match -> ClosedRange<Int>? in
        let after = text[match.range.upperBound...]
        guard !after.hasPrefix(" (10%)"), !after.hasPrefix("%"),
              let low = Int(match.1.filter(\.isNumber)), let high = Int(match.2.filter(\.isNumber)), low <= high else { return nil }
        return low...high
    }
}

@Suite("A range stated in words is the declared one")
struct StatedRangeTests {
    @Test("Every option's help states its declared range, if it states one", arguments: Subcommand.allCommands)
    func optionHelp(subcommand: Subcommand) {
        for option in subcommand.options {
            guard let range = option.integerRange else { continue }
            for stated in statedRanges(in: option.abstract) {
                #expect(stated == range, "\(subcommand.rawValue) \(option.longSpelling): help says \(stated), the option takes \(range)")
            }
        }
    }

    @Test("Every served parameter's text and expectation state its option's range, if they state one")
    func queryParameters() {
        for route in PreviewRequests.routes {
            for parameter in route.parameters {
                guard let range = parameter.option.integerRange, parameter.name != "width", parameter.name != "height" else { continue }
                for stated in statedRanges(in: parameter.help) + statedRanges(in: parameter.expectation) {
                    #expect(stated == range, "\(route.stem) \(parameter.name): says \(stated), --\(parameter.option.name) takes \(range)")
                }
            }
        }
    }

    @Test("The words find ranges and leave percentages alone")
    func finder() {
        #expect(statedRanges(in: "How many frames, 1 to 1000, taken") == [1...1000])
        #expect(statedRanges(in: "a percentage from 0 to 100 (10%)").isEmpty)
        #expect(statedRanges(in: "0 to 10,000 renders") == [0...10_000])
    }
}
