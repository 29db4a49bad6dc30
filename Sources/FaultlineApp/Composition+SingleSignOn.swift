import FaultlineCore
import FaultlineHTTP
import Pipeline

extension Composition {
    /// OpenID Connect single sign-on over this data's people and projects: the provider is reached with `fetcher`,
    /// signatures checked with swift-crypto, and sessions are the people's (``PeopleService``).
    ///
    /// - Parameter redirectURI: this server's callback URL, once it knows its address.
    func singleSignOn(
        _ configuration: SingleSignOnConfiguration, fetcher: any OIDCFetching,
        redirectURI: @escaping @Sendable () -> String?
    ) -> SingleSignOnService {
        SingleSignOnService(
            configuration: configuration, fetcher: fetcher, verifier: CryptoJWSVerifier(), people: people,
            projects: projects, hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(), clock: clock,
            redirectURI: redirectURI)
    }
}
