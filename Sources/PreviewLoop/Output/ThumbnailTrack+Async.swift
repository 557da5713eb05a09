extension FrameSampler {
    /// A sprite-sheet thumbnail track, its sheets returned in order; see
    /// ``thumbnailTrack(every:layout:mode:accuracy:pick:maxThumbnails:progress:onSheet:)``.
    public func thumbnailTrack(every: Double, layout: ThumbnailTrack.Layout = .init(), mode: ContentMode = .aspectFill,
                               accuracy: SeekAccuracy = .auto, pick: TilePick = .even,
                               maxThumbnails: Int = 1_000_000) async throws(PreviewLoopError)
        -> (track: ThumbnailTrack, sheets: [RGBImage]) {
        try await detached { sampler throws(PreviewLoopError) in
            var sheets: [RGBImage] = []
            let track = try sampler.thumbnailTrack(every: every, layout: layout, mode: mode, accuracy: accuracy, pick: pick,
                                                   maxThumbnails: maxThumbnails) { _, sheet throws(PreviewLoopError) in sheets.append(sheet) }
            return (track, sheets)
        }
    }
}
