import Formats
import Testing

@Suite struct SentryAuthTests {
    @Test func observedHeaders() throws {
        // sentry-sdk 2.75.0
        let sdk = try #require(
            SentryAuth(
                header:
                    "Sentry sentry_key=0123456789abcdef0123456789abcdef, sentry_version=7, sentry_client=sentry.python/2.75.0"
            ))
        #expect(
            sdk
                == SentryAuth(
                    publicKey: "0123456789abcdef0123456789abcdef", version: "7", client: "sentry.python/2.75.0"))
        // sentry-cli 3.8.2, with a timestamp (ignored)
        let cli = try #require(
            SentryAuth(
                header:
                    "Sentry sentry_key=KEY, sentry_version=7, sentry_timestamp=1795324473.581085, sentry_client=sentry-cli/x86_64"
            ))
        #expect(cli.publicKey == "KEY" && cli.client == "sentry-cli/x86_64")
        // A DSN with a secret; odd spacing, quotes, case and unprefixed keys
        let secret = try #require(SentryAuth(header: "  sentry   sentry_key = \"pub\" ,sentry_secret=sec,version=7"))
        #expect(secret == SentryAuth(publicKey: "pub", secretKey: "sec", version: "7"))
        #expect(SentryAuth(header: "Sentry key=abc")?.publicKey == "abc")
    }

    @Test func refusedHeaders() {
        for header in [
            "", "Sentry", "Sentry sentry_version=7", "Bearer sentry_key=abc", "Sentryx sentry_key=abc",
            "Sentry sentry_key=", "Sentry sentry_key=a b", "Sentry sentry_key=\u{7}bell",
            "Sentry sentry_key=" + String(repeating: "k", count: 257),
        ] {
            #expect(SentryAuth(header: header) == nil, "\(header)")
        }
    }

    @Test func queryParameters() throws {
        let auth = try #require(
            SentryAuth(query: "?sentry_client=sentry.native%2F0.7.20&sentry_key=abc123&sentry_version=7"))
        #expect(auth == SentryAuth(publicKey: "abc123", version: "7", client: "sentry.native/0.7.20"))
        #expect(SentryAuth(query: "sentry_key=k&x=%ZZ")?.publicKey == "k")  // a broken unrelated pair is skipped
        #expect(SentryAuth(query: "sentry_version=7") == nil)
        #expect(SentryAuth(query: "sentry_key=%E2%82") == nil)  // invalid UTF-8
        #expect(SentryAuth(query: "") == nil)
    }

    @Test func precedence() {
        let header = "Sentry sentry_key=from-header"
        #expect(
            SentryAuth.from(xSentryAuth: header, authorization: "Sentry sentry_key=b", query: "sentry_key=c")?.publicKey
                == "from-header")
        #expect(
            SentryAuth.from(xSentryAuth: nil, authorization: "Sentry sentry_key=b", query: "sentry_key=c")?.publicKey
                == "b")
        #expect(
            SentryAuth.from(xSentryAuth: "garbage", authorization: "Bearer t", query: "sentry_key=c")?.publicKey == "c")
        #expect(SentryAuth.from(xSentryAuth: nil, authorization: nil, query: nil) == nil)
    }
}
