import Testing
@testable import PreviewLoop

/// A `width`×`height` picture: `color` over the left `share` of the columns, `rest` elsewhere.
private func picture(_ color: (UInt8, UInt8, UInt8), share: Double = 1, rest: (UInt8, UInt8, UInt8) = (0, 0, 0),
                     width: Int = 40, height: Int = 20) -> RGBImage {
    let columns = Int((Double(width) * share).rounded())
    var pixels: [UInt8] = []
    pixels.reserveCapacity(width * height * 3)
    for _ in 0..<height {
        for x in 0..<width {
            let c = x < columns ? color : rest
            pixels += [c.0, c.1, c.2]
        }
    }
    return try! RGBImage(width: width, height: height, pixels: pixels)
}

/// A square wave: `on` for the first half of each period of `1 / hertz` s, `off` for the second, at
/// `fps` frames a second for `seconds`.
private func squareWave(hertz: Double, seconds: Double, fps: Double = 60, on: RGBImage, off: RGBImage) -> FlashReport {
    var analyzer = FlashAnalyzer()
    let frames = Int((seconds * fps).rounded())
    for index in 0..<frames {
        let time = Double(index) / fps
        let phase = (time * hertz).truncatingRemainder(dividingBy: 1)
        analyzer.add(phase < 0.5 - 1e-9 ? on : off, at: time)
    }
    return analyzer.report()
}

private let white = picture((255, 255, 255)), black = picture((0, 0, 0))

@Suite("Flash analysis (WCAG 2.3.1)")
struct FlashAnalyzerTests {
    @Test("Full-screen black and white: 1 Hz passes, 2 and 3 Hz warn, 4 and 10 Hz fail",
          arguments: [(1.0, FlashVerdict.pass, 1), (2, .warning, 2), (3, .warning, 3), (4, .failure, 4), (10, .failure, 10)])
    func fullScreen(hertz: Double, verdict: FlashVerdict, flashes: Int) {
        let report = squareWave(hertz: hertz, seconds: 3, on: white, off: black)
        #expect(report.verdict == verdict)
        #expect(report.seconds.count == 3)
        // The first second starts white: its first transition is the fall, so a window holds one less.
        #expect(report.seconds.dropFirst().allSatisfy { $0.luminanceFlashes == flashes && $0.redFlashes == 0 })
        #expect(report.seconds.allSatisfy { $0.area == 1 })
        if verdict == .pass { #expect(report.spans.isEmpty) } else {
            #expect(report.spans.first?.verdict == verdict)
            #expect(report.spans.last?.end == 3)
        }
    }

    @Test("Two or three flashes a second kept up for five seconds are an extended failure from the fifth second on",
          arguments: [2.0, 3.0])
    func sustained(hertz: Double) {
        let report = squareWave(hertz: hertz, seconds: 7, on: white, off: black)
        #expect(report.verdict == .extendedFailure)
        // At 2 Hz the first second (starting white) holds one flash: the run starts at second 1.
        let first = hertz == 2 ? 1.0 : 0
        #expect(report.spans == [FlashSpan(start: first, end: first + 4, verdict: .warning),
                                 FlashSpan(start: first + 4, end: 7, verdict: .extendedFailure)])
    }

    @Test("4 Hz over 10 % of the picture passes; over 40 % it fails")
    func area() {
        let small = squareWave(hertz: 4, seconds: 2, on: picture((255, 255, 255), share: 0.1), off: black)
        #expect(small.verdict == .pass)
        #expect(small.seconds.allSatisfy { $0.luminanceFlashes == 0 && abs($0.area - 0.1) < 0.001 })
        let large = squareWave(hertz: 4, seconds: 2, on: picture((255, 255, 255), share: 0.4), off: black)
        #expect(large.verdict == .failure)
        #expect(large.seconds.last?.luminanceFlashes == 4)
        #expect(abs(large.seconds[0].area - 0.4) < 0.001)
    }

    @Test("Saturated red against a grey as bright flashes red only; red against black is both")
    func red() {
        // sRGB 128 grey: relative luminance 0.216, pure red's 0.2126, so no luminance transition.
        let redOnGrey = squareWave(hertz: 4, seconds: 2, on: picture((255, 0, 0)), off: picture((128, 128, 128)))
        #expect(redOnGrey.verdict == .failure)
        #expect(redOnGrey.seconds.last?.redFlashes == 4)
        #expect(redOnGrey.seconds.allSatisfy { $0.luminanceFlashes == 0 })
        let redOnBlack = squareWave(hertz: 4, seconds: 2, on: picture((255, 0, 0)), off: black)
        #expect(redOnBlack.seconds.last?.redFlashes == 4 && redOnBlack.seconds.last?.luminanceFlashes == 4)
        // A dim red (excess 0.05 × 320 = 16 ≤ 20) over black does not count as red.
        let dim = squareWave(hertz: 4, seconds: 2, on: picture((62, 0, 0)), off: black)
        #expect(dim.seconds.allSatisfy { $0.redFlashes == 0 })
    }

    @Test("A bright flash whose darker state is not below 0.8 is no transition")
    func brightStates() {
        // sRGB 235 is relative luminance 0.83; 255 is 1.0: a 0.17 step between two bright states.
        let report = squareWave(hertz: 5, seconds: 2, on: white, off: picture((235, 235, 235)))
        #expect(report.verdict == .pass)
        #expect(report.seconds.allSatisfy { $0.luminanceFlashes == 0 })
    }

    @Test("A slow dissolve from black to white and back passes")
    func dissolve() {
        var analyzer = FlashAnalyzer()
        for index in 0..<(4 * 30) {
            let time = Double(index) / 30
            let level = UInt8((time < 2 ? time / 2 : (4 - time) / 2) * 255)
            analyzer.add(picture((level, level, level)), at: time)
        }
        let report = analyzer.report()
        #expect(report.verdict == .pass)
        #expect(report.seconds.allSatisfy { $0.luminanceFlashes == 0 })
    }

    @Test("A hard cut each second (a 1 fps slideshow) is one transition a second, not a flash")
    func slideshow() {
        var analyzer = FlashAnalyzer()
        for second in 0..<6 { analyzer.add(second % 2 == 0 ? white : black, at: Double(second)) }
        let report = analyzer.report()
        #expect(report.seconds.count == 6)
        #expect(report.verdict == .pass)
        #expect(report.seconds.allSatisfy { $0.luminanceFlashes == 0 })
    }

    @Test("One frame, nothing and a clip shorter than a second give one second")
    func tiny() {
        var one = FlashAnalyzer()
        one.add(white, at: 3.5)
        #expect(one.report().seconds == [FlashSecond(second: 0, luminanceFlashes: 0, redFlashes: 0, area: 0, verdict: .pass)])
        #expect(FlashAnalyzer().report().verdict == .pass)
        // A duration far beyond the frames (a broken container) or not a number stays near the frames.
        #expect(one.report(duration: 1e15).seconds.count == 1)
        #expect(one.report(duration: .nan).seconds.count == 1)
        var odd = FlashAnalyzer()
        odd.add(white, at: .infinity)
        odd.add(white, at: -.nan)
        #expect(odd.frameCount == 0 && odd.report().seconds.count == 1)
        let short = squareWave(hertz: 10, seconds: 0.4, on: white, off: black)
        #expect(short.seconds.count == 1)
        // Seven transitions in 0.35 s: three complete flashes and a fourth begun, a failure.
        #expect(short.seconds[0].luminanceFlashes == 3)
        #expect(short.verdict == .failure)
    }

    @Test("Variable frame intervals: flashes are counted on time, not on frames")
    func variableRate() {
        var analyzer = FlashAnalyzer()
        var time = 0.0, index = 0
        // 4 Hz square wave sampled at alternating 1/50 and 1/20 s intervals.
        while time < 3 {
            analyzer.add((time * 4).truncatingRemainder(dividingBy: 1) < 0.5 ? white : black, at: time)
            time += index % 2 == 0 ? 0.02 : 0.05
            index += 1
        }
        let report = analyzer.report()
        #expect(report.verdict == .failure)
        #expect(report.seconds[1].luminanceFlashes == 4)
    }

    @Test("Pictures over 96 px a side are reduced by a whole factor; luminance is linear sRGB")
    func sampling() {
        let sample = FlashSample(picture((255, 255, 255), share: 0.5, width: 480, height: 270))
        #expect(sample.width == 96 && sample.height == 54)
        let portrait = FlashSample(picture((255, 255, 255), width: 270, height: 480))
        #expect(portrait.width == 54 && portrait.height == 96)
        #expect(abs(sample.luminance(0) - 1) < 1e-5 && sample.luminance(95) == 0)
        let grey = FlashSample(picture((128, 128, 128), width: 8, height: 8))
        #expect(grey.width == 8 && abs(grey.luminance(0) - 0.21586) < 1e-4)
        #expect(FlashVerdict.failure > .extendedFailure && FlashVerdict.extendedFailure > .warning && FlashVerdict.warning > .pass)
    }
}

@Suite("The flash analysis size: the source's shape, never more pixels than the source nor than 96 × 96")
struct FlashAnalysisSizeTests {
    @Test("Extreme, tiny and ordinary shapes", arguments: [
        (Size(width: 1920, height: 1080), Size(width: 96, height: 54)),
        (Size(width: 160, height: 90), Size(width: 96, height: 54)),
        (Size(width: 1080, height: 1920), Size(width: 54, height: 96)),
        (Size(width: 90, height: 160), Size(width: 54, height: 96)),
        (Size(width: 16, height: 4000), Size(width: 1, height: 96)),
        (Size(width: 4000, height: 16), Size(width: 96, height: 1)),
        (Size(width: 16384, height: 1), Size(width: 96, height: 1)),
        (Size(width: 2, height: 2), Size(width: 2, height: 2)),
        (Size(width: 1, height: 1), Size(width: 1, height: 1)),
        (Size(width: 64, height: 48), Size(width: 64, height: 48)),
        (Size(width: 96, height: 96), Size(width: 96, height: 96)),
        (Size(width: 97, height: 96), Size(width: 96, height: 95)),
    ])
    func size(display: Size, expected: Size) {
        #expect(FlashSample.analysisSize(display: display) == expected)
    }

    @Test("Over every shape up to 300 a side and long strips: bounded, not enlarged, the shape kept")
    func bounds() {
        var displays: [Size] = []
        for width in stride(from: 1, through: 300, by: 7) {
            for height in stride(from: 1, through: 300, by: 11) { displays.append(Size(width: width, height: height)) }
        }
        for long in [500, 4000, 16384] {
            for short in [1, 2, 16, 90] { displays += [Size(width: long, height: short), Size(width: short, height: long)] }
        }
        for display in displays {
            let size = FlashSample.analysisSize(display: display)
            #expect(size.width >= 1 && size.height >= 1)
            #expect(size.width <= display.width && size.height <= display.height, "\(display) → \(size)")
            #expect(max(size.width, size.height) <= FlashSample.maximumSide, "\(display) → \(size)")
            #expect(size.width * size.height <= display.width * display.height)
            // The shape: each side within half a pixel of the exact scaled side (or the one-pixel floor).
            let scale = min(1, Double(FlashSample.maximumSide) / Double(max(display.width, display.height)))
            #expect(abs(Double(size.width) - max(1, Double(display.width) * scale)) <= 0.5, "\(display) → \(size)")
            #expect(abs(Double(size.height) - max(1, Double(display.height) * scale)) <= 0.5, "\(display) → \(size)")
        }
    }
}
