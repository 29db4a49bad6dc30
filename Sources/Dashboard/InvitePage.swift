/// The page of an invite link (`/invite/<secret>`, rendered live): the form where a person sets their password, or
/// a note that the link is not valid.
struct InvitePage {
    var chrome: PageChrome
    /// The login the invite is for; nil when the link is unknown, used or expired.
    var login: String?
    var errorMessage: String?
    /// The double-submit CSRF value of the form (also in a cookie).
    var csrf: String
    var minCharacters: Int

    init(login: String?, error: String?, csrf: String, minCharacters: Int) {
        // Served at `/invite/<secret>`: one folder down, as `invite/link` is.
        chrome = PageChrome(path: "invite/link", title: "Set your password", project: nil, now: nil, navigation: false)
        self.login = login
        errorMessage = error.flatMap { $0.isEmpty ? nil : $0 }
        self.csrf = csrf
        self.minCharacters = minCharacters
    }
}
