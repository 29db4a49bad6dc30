import FaultlineCore
import Testing

/// The scrubbing rules against Sentry Relay's published PII rule behaviour (relay-pii: the `builtin.rs` rule tests and
/// the legacy data-scrubber snapshots in `convert.rs`), re-expressed for our replacement text. Where we differ on
/// purpose (a checksum is required for card numbers and IBANs; the word `Bearer` is kept), the test says so.
@Suite struct ScrubbingRulesTests {
    let scrubber = Scrubber(settings: PrivacySettings())

    func scrub(_ text: String) -> String { scrubber.scrub(text) ?? text }

    // MARK: @creditcard

    @Test func creditCardNumbersAreFilteredWithOrWithoutSeparators() {
        // Relay's vector "John Appleseed 4571234567890111!" fails the Luhn check (Relay checks the shape only);
        // with its check digit fixed it is filtered, spaced or not.
        #expect(scrub("John Appleseed 4571234567890112!") == "John Appleseed [Filtered]!")
        #expect(scrub("John Appleseed 4571 2345 6789 0112!") == "John Appleseed [Filtered]!")
        #expect(scrub("card 4111-1111-1111-1111 declined") == "card [Filtered] declined")
        // Legacy snapshots: an Amex number as the whole value; a Visa number inside quotes.
        #expect(scrub("378282246310005") == "[Filtered]")
        #expect(scrub("'4242424242424242'") == "'[Filtered]'")
        #expect(scrub("6011111111111117 and 5500000000000004") == "[Filtered] and [Filtered]")
    }

    @Test func numbersThatAreNotCardsAreKept() {
        // Relay's own vector: right shape, wrong check digit — a deliberate difference, not filtered here.
        #expect(scrubber.scrub("John Appleseed 4571234567890111!") == nil)
        #expect(scrubber.scrub("order 1234567890123456") == nil)  // no card prefix
        #expect(scrubber.scrub("x4111111111111111") == nil)  // inside a word
        #expect(scrubber.scrub("41111111111111110") == nil)  // 17 digits
        #expect(scrubber.scrub("0x7f0000001234 at 1795000000") == nil)
    }

    @Test func luhn() {
        #expect(Scrubber.luhn([4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]))
        #expect(!Scrubber.luhn([4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]))
    }

    // MARK: @iban

    @Test func ibansWithAValidChecksumAreFiltered() {
        #expect(scrub("some iban: DE89370400440532013000!") == "some iban: [Filtered]!")
        // Relay's longest-country vector (Russia) and two well-known valid ones.
        #expect(scrub("some iban: RU0204452560040702810412345678901!") == "some iban: [Filtered]!")
        #expect(scrub("GB82WEST12345698765432") == "[Filtered]")
        #expect(scrub("pay to FR1420041010050500013M02606 today") == "pay to [Filtered] today")
        // Countries starting with B (Belgium here): B is also where `Bearer` starts; both are looked for.
        #expect(scrub("iban BE68539007547034, then Bearer abc") == "iban [Filtered], then Bearer [Filtered]")
    }

    @Test func ibansAreNotFilteredInsideWordsOrWithABadShapeOrChecksum() {
        // Relay: not inside a word, not longer than the longest country's, not without two capital letters.
        #expect(scrubber.scrub("fooDE89370400440532013000bar") == nil)
        #expect(scrubber.scrub("some iban: RU02044525600407028104123456789010!") == nil)
        #expect(scrubber.scrub("some iban: N19386011117945!") == nil)
        // Relay's list of "valid" codes has randomised digits; their checksums fail, so they are kept here.
        #expect(scrubber.scrub("some iban: AT894962316580861740!") == nil)
        #expect(scrubber.scrub("some iban: DE89370400440532013001!") == nil)
    }

    // MARK: @pemkey

    @Test func pemPrivateKeyBodiesAreFilteredAndTheArmorKept() {
        let key = """
            This is a comment I left on my key

                        -----BEGIN EC PRIVATE KEY-----
            MIHbAgEBBEFbLvIaAaez3q0u6BQYMHZ28B7iSdMPPaODUMGkdorl3ShgTbYmzqGL
            fojr3jkJIxFS07AoLQpsawOFZipxSQHieaAHBgUrgQQAI6GBiQOBhgAEAdaBHsBo
            -----END EC PRIVATE KEY-----
            """
        #expect(scrub(key) == """
            This is a comment I left on my key

                        -----BEGIN EC PRIVATE KEY-----
            [Filtered]
            -----END EC PRIVATE KEY-----
            """)
        #expect(scrub("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----")
            == "-----BEGIN RSA PRIVATE KEY-----\n[Filtered]\n-----END RSA PRIVATE KEY-----")
        // A public key is not a secret.
        #expect(scrubber.scrub("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----") == nil)
    }

    // MARK: @urlauth

    @Test func passwordsInURLsAreFilteredAndTheUserKept() {
        // The legacy data scrubber's snapshots (Relay's `@urlauth:legacy`).
        #expect(scrub("pg://matt:pass@localhost/1") == "pg://matt:[Filtered]@localhost/1")
        #expect(scrub("foo redis://redis:foo@localhost:6379/0 bar") == "foo redis://redis:[Filtered]@localhost:6379/0 bar")
        #expect(scrub("https://username:password@example.com/") == "https://username:[Filtered]@example.com/")
        // A user without a password, and an e-mail address, are not URL auth.
        #expect(scrubber.scrub("https://key@o1.ingest.example.com/1") == nil)
        #expect(scrubber.scrub("mail alice@example.com") == nil)
    }

    // MARK: @bearer

    @Test func bearerTokensAreFiltered() {
        #expect(scrub("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def") == "Authorization: Bearer [Filtered]")
        #expect(scrub("bearer   abc123 next") == "bearer   [Filtered] next")
        #expect(scrubber.scrub("the bearer of bad news") != nil)  // like Relay: any word after "bearer"
        #expect(scrubber.scrub("unbearer abc") == nil)
    }

    // MARK: @userpath

    @Test func userNamesInHomePathsAreReplaced() {
        #expect(scrub("C:\\Users\\mitsuhiko\\Desktop") == "C:\\Users\\[user]\\Desktop")
        #expect(scrub("File in /Users/mitsuhiko/Development/sentry-stripping") == "File in /Users/[user]/Development/sentry-stripping")
        #expect(scrub("C:\\Windows\\Profiles\\Armin\\Temp") == "C:\\Windows\\Profiles\\[user]\\Temp")
        #expect(scrub("/home/alice/src/app.c") == "/home/[user]/src/app.c")
        #expect(scrub("C:/Users/bob/app.exe") == "C:/Users/[user]/app.exe")
        #expect(scrubber.scrub("/home/[user]/src/app.c") == nil)  // idempotent
        #expect(scrubber.scrub("/usr/lib/libc.so.6") == nil)
    }

    // MARK: @password (key names)

    @Test func sensitiveKeyNamesFilterTheirValues() {
        // Legacy snapshots: `user.data` keys and `MYSQL_PWD`, matched as case-insensitive substrings.
        for key in ["password", "a_password_here", "apiKey", "api_key", "the_secret", "MYSQL_PWD", "my-token", "new_token",
                    "secret-token-here", "Authorization", "credentials", "private_key", "sessionid", "passwd"] {
            #expect(scrubber.decide(key: key) == .filter, "\(key)")
        }
        for key in ["foo", "message", "username", "email", "custom_keys", "extra"] {
            #expect(scrubber.decide(key: key) == .inspect, "\(key)")
        }
    }

    @Test func safeFieldsWinOverSensitiveNamesAndExtraNamesAdd() {
        // Relay's `safe_fields_for_token` snapshot: the safe ones are kept, every other token key is filtered.
        let custom = Scrubber(settings: PrivacySettings(
            safeFields: ["access_token", "GitHub_Token", "stripetoken"], sensitiveFields: ["Ssn", "card_holder"]))
        #expect(custom.decide(key: "access_token") == .keep)
        #expect(custom.decide(key: "github_token") == .keep)
        #expect(custom.decide(key: "stripetoken") == .keep)
        #expect(custom.decide(key: "my-token") == .filter)
        #expect(custom.decide(key: "password") == .filter)
        #expect(custom.decide(key: "user_ssn") == .filter)
        #expect(custom.decide(key: "Card_Holder") == .filter)
        #expect(scrubber.decide(key: "user_ssn") == .inspect)
    }

    // MARK: @ip and debug metadata

    @Test func ipAddressFieldsAreDroppedUnlessKept() {
        #expect(scrubber.decide(key: "ip_address") == .drop)
        #expect(scrubber.decide(key: "REMOTE_ADDR") == .drop)
        let keep = Scrubber(settings: PrivacySettings(keepIPAddresses: true))
        #expect(keep.decide(key: "ip_address") == .keep)
        // Scrubbing off still drops IP addresses unless they are kept (two separate switches, as in Sentry).
        let off = Scrubber(settings: PrivacySettings(scrubbing: false))
        #expect(off.decide(key: "ip_address") == .drop)
        #expect(off.decide(key: "password") == .inspect)  // walked for IP fields, but no rule applies
        #expect(off.decide(key: "user") == .inspect)
        #expect(off.scrub("4111111111111111") == nil)
        #expect(!Scrubber(settings: PrivacySettings(scrubbing: false, keepIPAddresses: true)).isActive)
    }

    @Test func debugMetadataAndProtocolFieldsAreNeverScrubbed() {
        for key in ["debug_meta", "images", "modules", "registers", "capturedMemory", "event_id", "session_id", "sid",
                    "timestamp", "release", "version", "build_id", "buildId", "debug_id", "instruction_addr", "address",
                    "baseAddress", "fault_address", "package"] {
            #expect(scrubber.decide(key: key) == .keep, "\(key)")
        }
        // `session_id` holds the word "session" (a sensitive name) but is the protocol's id: kept.
        #expect(Scrubber(settings: PrivacySettings(sensitiveFields: ["id"])).decide(key: "event_id") == .keep)
    }
}
