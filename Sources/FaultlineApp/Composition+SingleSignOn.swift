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
            sealer: AESGCMLoginStateSealer(secret: serverSecret), redirectURI: redirectURI)
    }

    /// The server's stored 32-byte secret (`mail_secrets`), made from the system's random source the first time, the
    /// same for every node of one database: the key material of the unsubscribe links and of single sign-on's login
    /// cookie (which derives its own key from it).
    var serverSecret: @Sendable () async throws -> [UInt8] {
        let store = stores.alerts
        return {
            var random = SystemRandomNumberGenerator()
            let fresh = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            return try await store.mailSecret(fresh: fresh)
        }
    }
}
