public import Logging

/// One outgoing email to one recipient: plain text, and an HTML version when there is one (sent together as
/// `multipart/alternative`).
public struct EmailMessage: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var text: String
    public var html: String?
    /// The link the mail carries (verification or password reset), kept apart so that adapters and logs can
    /// treat it as the secret it is.
    public var link: String?

    public init(to: String, subject: String, text: String, html: String? = nil, link: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.link = link
    }
}

/// Sends emails for the user flows (verification, password reset). Parse Server's `emailAdapter`.
public protocol EmailAdapter: Sendable {
    func send(_ message: EmailMessage) async throws
}

/// The default adapter: sends nothing, logs the recipient and subject at `info`. The link (which holds a
/// single-use token) appears only at `debug`, so production logs never carry it.
public struct LoggingEmailAdapter: EmailAdapter {
    let logger: Logger

    public init(logger: Logger = Logger(label: "parsley.email")) {
        self.logger = logger
    }

    public func send(_ message: EmailMessage) async throws {
        logger.info("email not sent (no email adapter configured)", metadata: ["to": .string(message.to), "subject": .string(message.subject)])
        if let link = message.link {
            logger.debug("email link", metadata: ["to": .string(message.to), "link": .string(link)])
        }
    }
}
