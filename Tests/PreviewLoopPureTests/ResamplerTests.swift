import Testing
@testable import PreviewLoop

@Suite("Constant-rate resampling")
struct ResamplerTests {
    /// Runs the resampler over source times; returns the source index of each output frame.
    func resample(_ times: [Double], fps: Int, length: Double) -> (picks: [Int], lastDuration: Double) {
        var resampler = ConstantRateResampler(framesPerSecond: fps)
        var picks: [Int] = []
        for (index, time) in times.enumerated() {
            picks += Array(repeating: max(0, index - 1), count: resampler.advance(to: time))
        }
        let (remaining, lastDuration) = resampler.finish(length: length)
        picks += Array(repeating: times.count - 1, count: remaining)
        return (picks, lastDuration)
    }

    @Test("25 fps to 15 fps picks the frame displayed at each instant")
    func downsample() {
        let times = (0..<75).map { Double($0) / 25 }
        let (picks, last) = resample(times, fps: 15, length: 3)
        #expect(picks.count == 45)
        for (k, pick) in picks.enumerated() {
            #expect(pick == Int((Double(k) / 15 * 25 + 1e-9).rounded(.down)), "output \(k)")
        }
        #expect(abs(last - 1.0 / 15) < 1e-9)
    }

    @Test("10 fps to 15 fps repeats frames; exact coincidences pick the new frame")
    func upsample() {
        let (picks, _) = resample((0..<10).map { Double($0) / 10 }, fps: 15, length: 1)
        #expect(picks == [0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9])
    }

    @Test("A length that is not a whole number of frames shortens the last one")
    func partialLastFrame() {
        let (picks, last) = resample([0, 0.1, 0.2], fps: 10, length: 0.25)
        #expect(picks == [0, 1, 2])
        #expect(abs(last - 0.05) < 1e-9)
    }
}
