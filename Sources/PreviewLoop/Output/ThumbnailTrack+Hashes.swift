extension ThumbnailTrack.Layout {
    /// The perceptual hash of each tile `sheet` (sheet `index`, from 0) holds, in place order, for the
    /// first `count` places: what `sprites --json` and batch records list as a sheet's `tile_phashes`.
    /// Take it while the sheet is in memory (in `onSheet`); `count` is the number of cues on the sheet.
    public func perceptualHashes(of sheet: RGBImage, index: Int, count: Int) -> [PerceptualHash] {
        (0..<max(0, min(count, tilesPerSheet))).map { position in
            PerceptualHash(sheet, region: place(index * tilesPerSheet + position).rect)
        }
    }
}
