import Foundation
import TestSupport
import Testing

/// An app that links FaultlineSDK must not carry the server: no database, no HTTP server, no NIO.
@Suite struct SDKPackagingTests {
    /// Module names whose code would show up in the app's symbol table if the SDK pulled them in.
    static let serverModules = [
        "GRDB", "Hummingbird", "NIOCore", "NIOPosix", "Storage", "FaultlineHTTP", "Symbolication",
    ]

    @Test(arguments: [SDKBinaries.example, SDKBinaries.fixture])
    func anAppThatLinksTheSDKCarriesNoServerCode(_ binary: String) throws {
        // Given the example app and the test fixture, both built against the FaultlineSDK product.
        let symbols = try Command.run("nm", ["--defined-only", binary])
        #expect(symbols.status == 0, "\(symbols.err)")
        // Then the SDK's own code is there (so the check sees real Swift symbols)…
        #expect(symbols.out.contains("12FaultlineSDK"))
        // …and no server module's code is (Swift symbols carry their module as <length><name>).
        for module in Self.serverModules {
            #expect(!symbols.out.contains("\(module.utf8.count)\(module)"), "\(binary) contains \(module) code")
        }
        // Nor does it load SQLite or libdw at run time.
        let libraries = try Command.run("ldd", [binary])
        #expect(libraries.status == 0, "\(libraries.err)")
        #expect(!libraries.out.contains("libsqlite3"))
        #expect(!libraries.out.contains("libdw"))
    }

    @Test func theServerItselfWouldFailTheCheck() throws {
        // The check can fail: the server binary has the modules the SDK must not have.
        let symbols = try Command.run("nm", ["--defined-only", ServerProcess.binary])
        #expect(symbols.out.contains("4GRDB"))
        #expect(symbols.out.contains("11Hummingbird"))
    }
}
