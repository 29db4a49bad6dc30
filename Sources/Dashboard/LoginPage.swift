/// The sign-in form the server shows at `/login` (rendered live, not written to the site).
struct LoginPage {
    var chrome: PageChrome
    var errorMessage: String?
    var next: String

    init(error: String?, next: String) {
        chrome = PageChrome(path: "login", title: "Sign in", project: nil, now: nil, navigation: false)
        errorMessage = error.flatMap { $0.isEmpty ? nil : $0 }
        self.next = next
    }
}
