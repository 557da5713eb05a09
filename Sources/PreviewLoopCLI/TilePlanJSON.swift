import PreviewLoop

/// The `--json` report of `sheet` and `strip`: what was chosen and why.
enum TilePlanJSON {
    /// One JSON object: the output, the pick, each tile (time asked, time of the frame shown, reason,
    /// cut score), the dropped near-duplicates and, for `scenes`, the cut search.
    static func text(_ plan: TilePlan, output: String, width: Int, height: Int) -> String {
        func rounded(_ value: Double) -> PrettyJSON { .number((value * 1e6).rounded() / 1e6) }
        func choice(_ choice: TileChoice) -> [String: PrettyJSON] {
            ["time": rounded(choice.time), "reason": .string(choice.reason.rawValue),
             "score": choice.score.map(rounded) ?? .null]
        }
        let tiles = zip(plan.tiles, plan.frames).map { tile, frame in
            PrettyJSON.object(choice(tile).merging(["frame_time": rounded(frame.sourceTime)]) { $1 })
        }
        let dropped = plan.dropped.map { drop in
            PrettyJSON.object(choice(drop.choice).merging([
                "frame_time": rounded(drop.frameTime), "duplicate_of": rounded(drop.duplicateOf),
                "distance": rounded(drop.distance),
            ]) { $1 })
        }
        var members: [String: PrettyJSON] = [
            "output": .string(output), "width": .integer(width), "height": .integer(height),
            "pick": .string(plan.pick.rawValue), "tiles": .array(tiles), "dropped": .array(dropped),
        ]
        if let scan = plan.scan {
            members["scan"] = .object([
                "cuts": .array(scan.cuts.map { .object(["time": rounded($0.time), "score": rounded($0.score)]) }),
                "keyframes_decoded": .integer(scan.keyframesDecoded), "groups": .integer(scan.groups),
                "groups_decoded": .integer(scan.groupsDecoded), "frames_decoded": .integer(scan.framesDecoded),
            ])
        }
        return PrettyJSON.object(members).text()
    }
}
