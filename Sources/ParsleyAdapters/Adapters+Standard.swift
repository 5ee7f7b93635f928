public import ParsleyDomain

extension Adapters {
    /// Parsley's own adapters: webhooks over AsyncHTTPClient, `authData.github` checked against GitHub's API
    /// (`accounts.githubAPIURL`), and files in a folder on disk. The server, the benchmarks and the tests build their
    /// services with these.
    public static var standard: Adapters {
        Adapters(
            webhookTransport: HTTPWebhookTransport(),
            identityProviders: { accounts in [GitHubAuthProvider(apiURL: accounts.githubAPIURL)] },
            makeFolderFileStore: { root in LocalFileStore(root: root) })
    }
}
