/// Where reports go and with which key: `http(s)://KEY@HOST[:PORT][/PREFIX]/PROJECT`, as Sentry DSNs look.
///
/// CONTRACT (owner: sdk-delivery helper). The native routes find the project by the key, so `PROJECT` is
/// kept only to show it; `PREFIX` is a path a reverse proxy may put in front of the server.
package struct DSN: Sendable, Equatable {
    /// `scheme://host[:port][/prefix]`, without a trailing slash.
    package var baseURL: String
    /// The project's ingest key (sent as `Authorization: Bearer KEY`).
    package var key: String
    package var projectID: String?

    /// Parses a DSN; throws `invalidDSN` naming what is wrong.
    package init(_ text: String) throws {
        throw SDKError(.unimplemented, "DSN.init")
    }
}
