import FaultlineCore

extension SiteRenderer {
    /// The page of an invite link: the form to set a password for `login`, or (nil) a page saying the link is not
    /// valid, was used or has expired.
    ///
    /// - Parameters:
    ///   - login: the person's login, shown (escaped) above the form.
    ///   - error: shown above the form (escaped), e.g. "The two passwords differ."
    ///   - csrf: the form's double-submit value (the server sets the same in a cookie).
    /// - Throws: `DashboardError` when the template fails.
    public func invitePage(login: String?, error: String?, csrf: String) throws -> String {
        try templates.render(
            InvitePage(login: login, error: error, csrf: csrf, minCharacters: PasswordRule.minCharacters), as: "invite")
    }
}
