import PreviewLoop

// The client's own types, named like the library's.
struct Size { var points: Double }
struct Source { var name: String }
struct Shape { var sides: Int }

let mine = (Size(points: 12), Source(name: "camera"), Shape(sides: 4))
let box = PreviewLoop.Size(width: 160, height: 90)
let input = PreviewLoop.Source.file(CommandLine.arguments.dropFirst().first ?? "clip.mp4")
let corner = PreviewLoop.Shape.self
let configuration = PreviewLoop.LoopPlayer.Configuration(size: box, windowStart: .percent(10))
// The strip call, configured with the client's own types beside the library's.
let stripConfiguration = PreviewLoop.ContactStrip.Configuration(count: 4, tileSize: .exact(box), span: .wholeClip)
print(mine.0.points, mine.1.name, mine.2.sides, box, input, corner, configuration.size, stripConfiguration.count)

// What a client does with a clip without any package-only type: a portrait-aware poster from a window
// given as the commands take it, a contact sheet with the library's own drawer and header, both written
// to files whole or not at all.
func stills(of input: PreviewLoop.Source) async throws {
    let sampler = try await PreviewLoop.FrameSampler(source: input)
    let poster = try await sampler.posterFrame(start: .percent(10), size: .width(480))
    try PreviewLoop.ImageEncoder.write(poster.frame.image, as: .jpeg, quality: 85, to: "poster.jpg")
    let sheet = try await sampler.contactSheet(.init())
    try PreviewLoop.ImageEncoder.write(sheet.image, as: .png, to: "sheet.png")
}
