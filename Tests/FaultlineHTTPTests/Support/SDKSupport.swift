import Foundation

/// The client-side binaries the SDK's end-to-end tests run, built beside `faultline` by `swift build --build-tests`.
enum SDKBinaries {
    static var folder: String { URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().path }
    /// The launcher (`Sources/faultline-run`).
    static var launcher: String { folder + "/faultline-run" }
    /// The scripted Swift program that links FaultlineSDK (`Tests/Fixtures/SDKFixture/main.swift`).
    static var fixture: String { folder + "/SDKFixture" }
    /// The example app (`Examples/CrashOnRequest`).
    static var example: String { folder + "/faultline-example" }
    /// `symupload`, to upload the fixture's debug file.
    static var symupload: String { folder + "/symupload" }
}
