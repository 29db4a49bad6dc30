import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// A report whose text folds past PostgreSQL's limit for one search entry, posted to the real `faultline` binary on a
/// real PostgreSQL database beside another project's report: both are processed by the worker and found by
/// `GET /{slug}/search`, each in its own project (issue #39, finding 3). Before search entries were bounded in bytes
/// after folding, the worker's save of such a report failed at every try and it stayed pending.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SearchEntryLimitEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A client-symbolicated crash within the ingest limits (108 function names of 38 words, 64 custom keys of 4,
    /// a message of 38) whose words fold to ~1.1 MB of distinct lexemes.
    static func hostileCrash(_ n: Int) -> String {
        var next = 0
        func words(_ count: Int) -> String {
            defer { next += count }
            return HangulWords.words(next, count)
        }
        let frames = (0..<108).map { _ in #"{"function":"\#(words(38))"}"# }.joined(separator: ",")
        let keys = (0..<64).map { #""k\#($0)":"\#(words(4))""# }.joined(separator: ",")
        return """
            {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(InsightsEndToEndTests.now)",
             "app":{"version":"1.0","build":"1"},"error":{"type":"SIGSEGV","message":"\(words(38))"},
             "threads":[{"name":"main","crashed":true,"frames":[\(frames)]}],"custom_keys":{\(keys)}}
            """
    }

    /// The event ids (32 hex digits) a search page of `slug` lists for `text`.
    func search(_ server: ServerProcess, _ slug: String, _ text: String) async throws -> [String] {
        let q = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let answer = try await http.send(.GET, server.baseURL + "/\(slug)/search?q=\(q)")
        #expect(answer.status == 200)
        return String(decoding: answer.body, as: UTF8.self).components(separatedBy: "href=\"events/").dropFirst().map {
            String($0.prefix(32))
        }
    }

    func hex(_ n: Int) -> String { Payloads.eventID(n).replacingOccurrences(of: "-", with: "") }

    @Test func aReportWhoseTextFoldsPastTheEntryLimitIsProcessedAndFoundBesideAnotherProjects() async throws {
        let cluster = try await MultiNodeEndToEndTests.Cluster(slug: "shop")
        defer { cluster.cleanUp() }
        let other = try await ServerProcess.createProject(
            "other", in: ServerProcess.newFolder(), extra: cluster.arguments)
        let server = try await cluster.node(["--public-dashboard"], environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        // Given a report under the 1 MiB a report may have, and another project's ordinary report.
        let hostile = Self.hostileCrash(1)
        #expect(hostile.utf8.count < 1_048_576)
        let ordinary = SearchEndToEndTests.crash(
            2, user: "bob", plan: "silver", function: "Cart.total()", message: "boom")
        // When both are posted.
        #expect(try await http.postReports(server.baseURL, key: cluster.project.ingest, hostile).status == 202)
        #expect(try await http.postReports(server.baseURL, key: other.ingest, ordinary).status == 202)

        // Then the worker processes both, and each is found in its own project only.
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try cluster.count("SELECT count(*) FROM reports WHERE symbolication <> 'pending'") == 2
            })
        #expect(try cluster.count("SELECT count(*) FROM reports WHERE symbolication = 'missing'") == 0)
        #expect(try await search(server, "shop", HangulWords.word(0)) == [hex(1)])
        #expect(try await search(server, "other", HangulWords.word(0)).isEmpty)
        #expect(try await search(server, "other", "Cart.total()") == [hex(2)])
        #expect(try await search(server, "shop", "Cart.total()").isEmpty)
    }
}
