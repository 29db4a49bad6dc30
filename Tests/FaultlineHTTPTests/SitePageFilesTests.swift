import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import FaultlineHTTP

/// The site's files are served from one open each (`SitePageFiles`): a page the renderer replaces while it is being
/// served goes out whole, with the length of what is sent.
@Suite struct SitePageFilesTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("site-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/shop", withIntermediateDirectories: true)
        return path
    }

    /// Replaces `path` as the renderer does: a new file renamed over it.
    func replace(_ path: String, with text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + ".tmp"))
        #expect(rename(path + ".tmp", path) == 0)
    }

    @Test func aPageReplacedBetweenItsSizeAndItsBodyIsSentAsTheFileItsSizeCameFrom() async throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let old = String(repeating: "old page ", count: 500)
        try replace(root + "/shop/index.html", with: old)
        let files = SitePageFiles(root: root)
        // Given the size taken (as FileMiddleware does before it sets Content-Length)
        let id = try #require(files.getFileIdentifier("/shop/index.html"))
        let attributes = try #require(try await files.getAttributes(id: id))
        #expect(attributes.size == old.utf8.count)
        #expect(!attributes.isFolder)
        // When the renderer replaces the page with a shorter one before the body is read
        try replace(root + "/shop/index.html", with: "new")
        // Then the body is the page the size was taken from, whole
        let context = FileTestContext(source: .init(logger: Logger(label: "test")))
        #expect(try await Self.text(files.loadFile(id: id, context: context)) == old)
        #expect(try await Self.text(files.loadFile(id: id, range: 4...7, context: context)) == "page")
        // A folder is a folder, a missing file nothing.
        #expect(try await files.getAttributes(id: files.getFileIdentifier("/shop")!)?.isFolder == true)
        #expect(try await files.getAttributes(id: files.getFileIdentifier("/shop/gone.html")!) == nil)
    }

    @Test func theSiteIsServedWithTheLengthOfWhatIsSent() async throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try replace(root + "/shop/index.html", with: "<p>overview</p>")
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: SiteFilesMiddleware(folder: root))
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await client.execute(uri: "/shop/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "<p>overview</p>")
                #expect(response.headers[.contentLength] == "15")
            }
            try await client.execute(uri: "/shop/missing.html", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}

extension SitePageFilesTests {
    /// The text `body` writes.
    static func text(_ body: ResponseBody) async throws -> String {
        let collected = Collected()
        try await body.write(CollectingWriter(into: collected))
        return collected.buffer.withLock { String(buffer: $0) }
    }
}

/// A request context made without a channel.
struct FileTestContext: RequestContext {
    struct Source: RequestContextSource {
        var logger: Logger
    }
    var coreContext: CoreRequestContextStorage
    init(source: Source) { coreContext = .init(source: source) }
}

/// What a `CollectingWriter` was given.
final class Collected: Sendable {
    let buffer = Mutex(ByteBuffer())
}

/// A response body writer that keeps what it is given.
struct CollectingWriter: ResponseBodyWriter {
    let into: Collected
    mutating func write(_ buffer: ByteBuffer) async throws {
        into.buffer.withLock { $0.writeImmutableBuffer(buffer) }
    }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
