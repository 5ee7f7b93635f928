public import ParsleyDomain

extension Adapters {
    /// Parsley's own adapters: webhooks over AsyncHTTPClient, the `authData` providers of the `auth` option
    /// (`AuthOption`: Apple, Google, Facebook Limited Login and OpenID Connect identity tokens checked against the
    /// providers' keys; Facebook access tokens against the Graph API, `oauth2` providers' against their introspection
    /// endpoint, GitHub's against its API, `accounts.githubAPIURL`), and files in a folder on disk. The server, the
    /// benchmarks and the tests build their services with these.
    public static var standard: Adapters {
        Adapters(
            webhookTransport: HTTPWebhookTransport(),
            identityProviders: { accounts in AuthOption(accounts.auth, githubAPIURL: accounts.githubAPIURL).providers },
            makeFolderFileStore: { root in LocalFileStore(root: root) })
    }
}
