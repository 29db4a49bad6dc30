import FaultlineCore

/// Resolves a host name to its IP addresses (4 or 16 bytes each, network order).
public protocol HostResolving: Sendable {
    /// Every address `host` resolves to; throws when it does not resolve.
    func addresses(of host: String) async throws -> [[UInt8]]
}

/// Decides whether a webhook URL may be posted to: http(s) only, and — unless the operator allowed internal
/// targets (`--allow-private-webhooks`) — never to a host that is or resolves to a loopback, private, link-local
/// or otherwise internal address (``NetworkAddressRules``).
///
/// Checked when the URL is configured (API and CLI) and again before every delivery, since a name can be
/// pointed elsewhere after it was configured. Whoever can set the webhook URL could otherwise make the server
/// probe its own network. What is left: a name that resolves publicly here and privately a moment later, when
/// the HTTP client resolves it again (DNS rebinding with a very short TTL).
public struct WebhookTargetPolicy: Sendable {
    let resolver: any HostResolving
    /// Whether internal targets are allowed (the operator's `--allow-private-webhooks`).
    public let allowPrivate: Bool

    public init(resolver: any HostResolving, allowPrivate: Bool) {
        self.resolver = resolver
        self.allowPrivate = allowPrivate
    }

    /// Throws ``WebhookTargetProblem`` when `url` may not be posted to.
    public func check(_ url: String) async throws(WebhookTargetProblem) {
        let target = try WebhookTarget.parse(url)
        if allowPrivate { return }
        if let problem = NetworkAddressRules.literalProblem(target) { throw problem }
        let addresses: [[UInt8]]
        do {
            addresses = try await resolver.addresses(of: target.host)
        } catch {
            throw WebhookTargetProblem(.unresolvable, "\(target.host) does not resolve to an address")
        }
        guard !addresses.isEmpty else {
            throw WebhookTargetProblem(.unresolvable, "\(target.host) does not resolve to an address")
        }
        if addresses.contains(where: NetworkAddressRules.isPrivate) { throw NetworkAddressRules.refused(target.host) }
    }
}
