import Logging
import Synchronization

/// Mails sent without making a request wait (as Parse Server sends verification mails): `enqueue` hands the mail
/// over, and `run` (a background service of the server, see `ParseAPIBackground`) sends them one at a time until it
/// is cancelled. Bounded: when `limit` mails are waiting, further ones are dropped with a warning.
public final class MailQueue: Sendable {
    private let stream: AsyncStream<EmailMessage>
    private let continuation: AsyncStream<EmailMessage>.Continuation
    private let logger = Logger(label: "parsley.email")
    private let running = Atomic<Bool>(false)

    public init(limit: Int = 1_000) {
        (stream, continuation) = AsyncStream<EmailMessage>.makeStream(bufferingPolicy: .bufferingOldest(limit))
    }

    func enqueue(_ message: EmailMessage) {
        if case .dropped = continuation.yield(message) {
            logger.warning("mail queue full: a mail was dropped")
        }
    }

    /// Sends queued mails with `deliver` until the task is cancelled.
    func run(_ deliver: @Sendable (EmailMessage) async -> Void) async {
        // One sender: a stream has one reader (a second server on the same API leaves the sending to the first).
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        for await message in stream {
            await deliver(message)
        }
    }
}
