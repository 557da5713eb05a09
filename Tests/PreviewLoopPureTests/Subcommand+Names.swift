@testable import PreviewLoopCLI
@testable import PreviewLoopJobs

// The registered subcommands by name, as the tests write them (`.thumb`); the sources name them only in
// `CommandRegistry.commands`.
extension Subcommand {
    static var probe: Subcommand { Subcommand(rawValue: "probe")! }
    static var thumb: Subcommand { Subcommand(rawValue: "thumb")! }
    static var strip: Subcommand { Subcommand(rawValue: "strip")! }
    static var sheet: Subcommand { Subcommand(rawValue: "sheet")! }
    static var loop: Subcommand { Subcommand(rawValue: "loop")! }
    static var timing: Subcommand { Subcommand(rawValue: "timing")! }
    static var render: Subcommand { Subcommand(rawValue: "render")! }
    static var sprites: Subcommand { Subcommand(rawValue: "sprites")! }
    static var card: Subcommand { Subcommand(rawValue: "card")! }
    static var batch: Subcommand { Subcommand(rawValue: "batch")! }
    static var wall: Subcommand { Subcommand(rawValue: "wall")! }
    static var serve: Subcommand { Subcommand(rawValue: "serve")! }
}
