/// The sign-in form the server shows at `/login` (rendered live, not written to the site).
struct LoginPage {
    var chrome: PageChrome
    var errorMessage: String?
    var next: String
    /// "Sign in with NAME" when single sign-on is configured.
    var singleSignOn: SingleSignOnLink?

    /// The link to `/login/sso`, returning to the same page afterwards.
    struct SingleSignOnLink {
        var name: String
        var href: String
    }

    init(error: String?, next: String, singleSignOn: String? = nil) {
        chrome = PageChrome(path: "login", title: "Sign in", project: nil, now: nil, navigation: false)
        errorMessage = error.flatMap { $0.isEmpty ? nil : $0 }
        self.next = next
        self.singleSignOn = singleSignOn.map {
            SingleSignOnLink(name: $0, href: "login/sso?next=" + Self.queryValue(next))
        }
    }

    /// `value` percent-encoded for a query string (unreserved characters and `/` as they are).
    static func queryValue(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            let scalar = Unicode.Scalar(byte)
            let unreserved =
                (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
            if unreserved || "-._~/".unicodeScalars.contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
