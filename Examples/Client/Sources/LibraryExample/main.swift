import PreviewLoop

// `swift run LibraryExample clip.mp4`: the clip's poster as poster.jpg and a contact strip as strip.png
// (the comments show what it prints for Fixtures/landscape.mp4, a 4:3 clip).
// Top-level code runs the blocking forms (Swift picks them here even after `await`, and warns); in an
// async function, `try await` runs the same calls on a thread of their own.
let input = CommandLine.arguments.dropFirst().first ?? "clip.mp4"
do throws(PreviewLoopError) {
    let sampler = try FrameSampler(source: .file(input))                          // opens and probes the clip
    let poster = try sampler.posterFrame(start: .percent(10), size: .width(640))  // first good frame from 10 %
    print(poster.frame)                                   // VideoFrame(640x480 at 0.400 s, loop 0, index 0)
    try ImageEncoder.write(poster.frame.image, as: .jpeg, quality: 85, to: "poster.jpg")
    let strip = try sampler.contactStrip(.init(count: 8, columns: 4))             // 8 tiles of 160x90, first 15 s
    print(strip.image)                                    // RGBImage(640x180, 345600 bytes)
    try ImageEncoder.write(strip.image, as: .png, to: "strip.png")
} catch {
    print("Error: \(error)")                              // one line: the input, the cause; error.code to switch on
}
