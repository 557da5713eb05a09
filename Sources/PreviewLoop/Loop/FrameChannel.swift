/// A bounded hand-over of frames from the decoding thread to an async consumer.
///
/// The producer blocks while `capacity` frames wait (so a slow consumer never lets decoding run ahead
/// and fill memory); the consumer suspends while none is ready.
/// `@unchecked Sendable`: every stored property is read and written only with `condition` locked.
final class FrameChannel: @unchecked Sendable {
    private let condition = ConditionLock()
    private let capacity: Int
    private var buffer: [VideoFrame] = []
    private var waiter: CheckedContinuation<Result<VideoFrame?, PreviewLoopError>, Never>?
    private var isFinished = false
    private var failure: PreviewLoopError?
    private var isCancelled = false
    /// Whether the consumer has been told of the cancellation (it is told once, then sees the end).
    private var reportedCancellation = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Hands over a frame, waiting while the buffer is full.
    ///
    /// - Returns: `false` when the consumer has gone away; the producer should stop.
    func send(_ frame: VideoFrame) -> Bool {
        condition.lock()
        while buffer.count >= capacity && !isCancelled { condition.wait() }
        if isCancelled { condition.unlock(); return false }
        if let waiter {
            self.waiter = nil
            condition.unlock()
            waiter.resume(returning: .success(frame))
        } else {
            buffer.append(frame)
            condition.unlock()
        }
        return true
    }

    /// Ends the sequence after the buffered frames, with an error or normally.
    func finish(throwing error: PreviewLoopError?) {
        condition.lock()
        isFinished = true
        failure = error
        let waiter = self.waiter
        self.waiter = nil
        condition.unlock()
        if let waiter {
            waiter.resume(returning: error.map { .failure($0) } ?? .success(nil))
        }
    }

    /// The consumer has gone away or its task was cancelled: wake and release the producer; the
    /// sequence throws ``PreviewLoopError/Code/cancelled`` once, then ends.
    func cancel() {
        condition.lock()
        isCancelled = true
        buffer.removeAll()
        condition.broadcast()
        let waiter = self.waiter
        self.waiter = nil
        if waiter != nil { reportedCancellation = true }
        condition.unlock()
        waiter?.resume(returning: .failure(Self.cancellation))
    }

    private static let cancellation = PreviewLoopError(.cancelled, "the task iterating the loop's frames was cancelled")

    /// The next frame, or `nil` at the end.
    func next() async throws(PreviewLoopError) -> VideoFrame? {
        try await withCheckedContinuation { (continuation: CheckedContinuation<Result<VideoFrame?, PreviewLoopError>, Never>) in
            condition.lock()
            if isCancelled {
                let report = !reportedCancellation
                reportedCancellation = true
                condition.unlock()
                continuation.resume(returning: report ? .failure(Self.cancellation) : .success(nil))
            } else if !buffer.isEmpty {
                let frame = buffer.removeFirst()
                condition.signal()
                condition.unlock()
                continuation.resume(returning: .success(frame))
            } else if isFinished {
                let error = failure
                failure = nil
                condition.unlock()
                continuation.resume(returning: error.map { .failure($0) } ?? .success(nil))
            } else {
                waiter = continuation
                condition.unlock()
            }
        }.get()
    }
}

extension LoopPlayer {
    /// The frames of a running loop as an `AsyncSequence`.
    ///
    /// Decoding starts when iteration starts, on a thread of its own, and stops promptly when the
    /// consuming task is cancelled or the iteration ends early (`break`).
    public struct Frames: AsyncSequence, Sendable {
        /// The frame type.
        public typealias Element = VideoFrame
        /// The one error type: a failure of the loop, or ``PreviewLoopError/Code/cancelled`` when the
        /// iterating task is cancelled.
        public typealias Failure = PreviewLoopError

        let loop: LoopPlayer
        let loops: Int?

        /// Starts decoding and returns the iterator.
        public func makeAsyncIterator() -> Iterator {
            let channel = FrameChannel(capacity: 4)
            let subscription = Subscription(channel: channel)
            subscription.handle = loop.start(loops: loops, onFrame: { frame, control in
                if !channel.send(frame) { control.stop() }
            }, onCompletion: { error in
                channel.finish(throwing: error)
            })
            return Iterator(subscription: subscription)
        }

        /// Iterates the frames; cancelling the task stops decoding.
        public struct Iterator: AsyncIteratorProtocol {
            let subscription: Subscription

            /// The next frame, or `nil` after the last pass (or after cancellation).
            public mutating func next() async throws(PreviewLoopError) -> VideoFrame? {
                let subscription = self.subscription
                let result: Result<VideoFrame?, PreviewLoopError> = await withTaskCancellationHandler {
                    do throws(PreviewLoopError) { return .success(try await subscription.channel.next()) } catch { return .failure(error) }
                } onCancel: {
                    subscription.cancel()
                }
                return try result.get()
            }
        }

        /// Ties decoding to the iterator's lifetime: dropping the iterator stops the loop.
        final class Subscription: @unchecked Sendable {
            // `handle` is set once, before the iterator is returned, and only read afterwards.
            let channel: FrameChannel
            var handle: LoopPlayer.Handle?

            init(channel: FrameChannel) {
                self.channel = channel
            }

            func cancel() {
                channel.cancel()
                handle?.stop()
            }

            deinit { cancel() }
        }
    }
}

/// The name ``LoopPlayer/Frames`` had before it was nested in ``LoopPlayer``.
@available(*, deprecated, renamed: "LoopPlayer.Frames")
public typealias PreviewLoopFrames = LoopPlayer.Frames
