import Testing

@testable import FaultlineSDK

@Suite struct DSNTests {
    @Test func plainDSN() throws {
        let dsn = try DSN("http://0123abcd@faultline.internal:8080/3")
        #expect(dsn.baseURL == "http://faultline.internal:8080")
        #expect(dsn.key == "0123abcd")
        #expect(dsn.projectID == "3")
    }

    @Test func httpsWithPrefixAndSecret() throws {
        let dsn = try DSN("  HTTPS://key:secret@example.com/errors/v2/17 \n")
        #expect(dsn.baseURL == "https://example.com/errors/v2")
        #expect(dsn.key == "key")
        #expect(dsn.projectID == "17")
    }

    @Test func trailingSlashAndNoProject() throws {
        #expect(try DSN("http://k@h/5/").projectID == "5")
        #expect(try DSN("http://k@h/5/").baseURL == "http://h")
        let bare = try DSN("http://k@127.0.0.1:9")
        #expect(bare.projectID == nil)
        #expect(bare.baseURL == "http://127.0.0.1:9")
    }

    @Test func ipv6Host() throws {
        let dsn = try DSN("http://k@[::1]:8080/1")
        #expect(dsn.baseURL == "http://[::1]:8080")
    }

    @Test(arguments: [
        ("", "empty"),
        ("faultline.internal/3", "scheme"),
        ("ftp://k@h/3", "http or https"),
        ("http://h:8080/3", "no key"),
        ("http://@h/3", "no key"),
        ("http://:secret@h/3", "no key"),
        ("http://k@/3", "no host"),
        ("http://k@:80/3", "no host"),
        ("http://k@h:0/3", "port"),
        ("http://k@h:65536/3", "port"),
        ("http://k@h:8x/3", "port"),
        ("http://k@h/3?x=1", "query"),
        ("http://k@h/3#f", "fragment"),
        ("http://k y@h/3", "spaces"),
    ])
    func invalid(_ text: String, _ why: String) {
        do {
            _ = try DSN(text)
            Issue.record("\(text) was accepted")
        } catch let error as SDKError {
            #expect(error.code == .invalidDSN)
            #expect(error.message.contains(why), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func errorsNeverEchoTheKey() {
        do {
            _ = try DSN("gopher://supersecretkey@h/3")
        } catch let error as SDKError {
            #expect(!error.message.contains("supersecretkey"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
