/// Seals the login state single sign-on keeps in the browser between `/login/sso` and its callback (the `state`,
/// `nonce` and PKCE verifier, and the path to return to), so that the browser carries it without being able to read
/// or change it, and no other server's cookie is taken (decision 0077).
public protocol LoginStateSealing: Sendable {
    /// `text` sealed: a cookie-safe value only this server (any of its nodes) opens.
    func seal(_ text: String) async throws -> String
    /// The text `sealed` holds; nil when this server did not seal it or it was changed.
    func open(_ sealed: String) async throws -> String?
}
