import Foundation
import NIOPosix
public import ParsleyCore

/// Where the pages of the email flows come from (Parse Server's `customPages` and `pages`). By default Parsley
/// serves its own verification and password-reset pages under `<mount>/apps`.
public struct PagesOptions: Sendable {
    /// `customPages`: URLs of the app's own pages the links redirect to (302, as Parse Server's PublicAPIRouter):
    /// `invalidLink`, `invalidVerificationLink`, `linkSendSuccess`, `linkSendFail`, `choosePassword`,
    /// `passwordResetSuccess`, `verifyEmailSuccess`, and `parseFrameURL` (mailed links open it with the page's path in
    /// `link`). A page left out is Parsley's own.
    public var customPages: [String: String] = [:]
    /// `pages.enableRouter`: Parse Server's PagesRouter replaces those routes (pages by file name, 303 redirects).
    public var enableRouter = false
    /// `pages.pagesEndpoint`: the path below the mount the pages router answers (default `apps`).
    public var pagesEndpoint = "apps"
    /// `pages.pagesPath`: a folder with the app's own page files (`password_reset.html`, ...); nil: Parsley's own.
    public var pagesPath: String? = nil
    /// `pages.customUrls`: page id (`passwordReset`, `emailVerificationSuccess`, ...) → URL redirected to instead.
    public var customUrls: [String: String] = [:]
    /// `pages.forceRedirect`: every page answer is a redirect to the page's URL, never its content.
    public var forceRedirect = false
    /// `pages.placeholders`: values for `{{name}}` in the pages, besides the page's parameters.
    public var placeholders: [String: JSONValue] = [:]

    public init() {}

    /// The path segment of the email links and their pages: `pagesEndpoint` with the pages router, else `apps`.
    public var linkEndpoint: String { enableRouter ? pagesEndpoint : "apps" }
}

/// The files of `pages.pagesPath`, read off the event loop.
public enum PageFiles {
    /// A file's bytes; nil when it is missing or not a readable file.
    public static func read(_ path: String) async throws -> [UInt8]? {
        try await NIOThreadPool.singleton.runIfActive {
            FileManager.default.contents(atPath: path).map { [UInt8]($0) }
        }
    }
}
