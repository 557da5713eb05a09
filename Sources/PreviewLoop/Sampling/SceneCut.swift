/// Thresholds of `--pick scenes`.
public struct ScenePickSettings: Hashable, Sendable {
    /// A frame starts a new shot when its ``LumaThumbnail/difference(from:)`` from the frame before is
    /// at least this and at least ``peakRatio`` times the differences on either side of it.
    public var cutThreshold = 15.0
    /// See ``cutThreshold``: rejects steady fast motion, whose differences are all alike.
    public var peakRatio = 2.0
    /// Keyframes this far apart (``LumaThumbnail/difference(from:)``) hold a change between them: their
    /// group of pictures is searched even when its packets show no cut (see
    /// ``FrameSampler/sceneCuts(start:length:settings:)``); past a group's last packet candidate, a frame
    /// this close to the next keyframe ends its decoding.
    public var groupThreshold = 8.0
    /// How many times the level of its neighbours (the lower of the median sizes of the 8 packets of its
    /// kind before and after it in its group of pictures) a packet must be to make its frames a cut
    /// candidate; one of 3× or more that is also 1.25× its group's 90th percentile counts too. A group
    /// of pictures is decoded only as far as its last candidate.
    public var packetRatio = 6.0
    /// A tile whose ``LumaThumbnail/normalisedDifference(from:)`` from a kept tile is below this is a
    /// near-duplicate and dropped.
    public var duplicateThreshold = 6.0
    /// The longest gradual transition (dissolve, cross-fade) found as one cut, in seconds; cuts this
    /// close whose pictures between are mixtures of the shots on either side make one transition.
    public var maximumTransition = 2.0

    public init() {}
}

/// A shot change found by ``FrameSampler/sceneCuts(start:length:settings:)``.
public struct SceneCut: Hashable, Sendable {
    /// How a cut was found.
    public enum Evidence: String, Hashable, Sendable {
        /// On decoded frames: the frame's difference from the frame before stood out from its neighbours'.
        case frames
        /// At a keyframe the encoder placed early (before its regular interval), after a group of
        /// pictures whose packets show no cut: the score is the keyframe's difference from the last
        /// frame decoded before it (the group's keyframe, or the last frame searched).
        case keyframe
        /// A gradual transition (a dissolve, a cross-fade): frames that each change a little and are
        /// mixtures of the shot before and the shot after (``ScenePickSettings/maximumTransition``), or
        /// several cuts found inside one; the time is its first frame wholly of the new shot and the
        /// score the difference between the shots on either side.
        case dissolve
    }
    /// The time of the first frame of the new shot.
    public var time: Double
    /// Its cut score (``LumaThumbnail/difference(from:)`` from the frame before, or see ``Evidence/keyframe``).
    public var score: Double
    public var evidence: Evidence = .frames
    /// The thumbnails of the frame before the cut and of the cut's frame, when known (to tell one
    /// transition's cuts from separate shots).
    var before: LumaThumbnail? = nil
    var after: LumaThumbnail? = nil
}

/// What the cut search decoded and found.
public struct SceneScan: Hashable, Sendable {
    /// The cuts, in time order.
    public var cuts: [SceneCut]
    /// Keyframes decoded alone (the first pass).
    public var keyframesDecoded: Int
    /// Groups of pictures then decoded frame by frame.
    public var groupsDecoded: Int
    /// Groups of pictures in the span.
    public var groups: Int
    /// Frames decoded in the second pass.
    public var framesDecoded: Int
    /// Packets that stood out as cut candidates (``ScenePickSettings/packetRatio``), `nil` when the
    /// packets were not read (no keyframe index).
    public var packetCandidates: Int?
}
