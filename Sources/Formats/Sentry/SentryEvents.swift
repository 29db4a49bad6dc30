import FaultlineCore

/// Sentry event JSON → `Report` (placeholder until the mapping lands).
public enum SentryEvents {
    /// Parses one Sentry event payload into a report, applying `limits`.
    public static func report(_ bytes: [UInt8], limits: IngestLimits) throws -> Report {
        throw FormatError(.malformedJSON, "Sentry events are not supported yet")
    }
}
