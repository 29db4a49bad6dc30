import FaultlineCore
import FaultlineHTTP
import Logging
import Pipeline

extension ServerAssembly {
    /// The unsubscribe links' key: the stored mail secret, made from 32 random bytes the first time.
    static func unsubscribeLinks(_ data: Composition) -> @Sendable () async throws -> UnsubscribeLinks {
        let secret = data.serverSecret
        return { UnsubscribeLinks(secret: try await secret()) }
    }

    /// The digest service over the same readers the API uses.
    static func digestService(
        _ data: Composition, mailer: SMTPSender, settings: Settings,
        links: @escaping @Sendable () async throws -> UnsubscribeLinks,
        serverURL: @escaping @Sendable () -> String?
    ) -> DigestService {
        DigestService(
            store: data.stores.alerts, insights: data.insights, projects: data.stores.projects, mailer: mailer,
            clock: data.clock, logger: Logger(label: "faultline.digests"), hour: settings.digestHour,
            publicURL: serverURL,
            unsubscribeLink: { person, project in
                guard let base = serverURL() else { return nil }
                return try await links().link(base: base, person: person, project: project)
            },
            fromName: mailer.settings.fromName, interval: settings.digestInterval,
            baseBackoff: settings.webhookBaseBackoffSeconds)
    }
}
