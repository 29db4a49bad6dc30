import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

@Suite struct StateFileTests {
    static func context(pid: Int32 = 4242) -> RunContext {
        RunContext(
            sessionID: "5b1c0e2a9d4f4a578c1b2e6f0a9d3c71", installID: "A0B1C2D3-0000-4000-8000-000000000001",
            userID: "user-1", appID: "com.example.app", appVersion: "2.4.1", appBuild: "381", environment: "staging",
            startedAt: 1_795_000_000.25, pid: pid)
    }

    @Test func roundTripsEveryField() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        var start = Self.context()
        start.breadcrumbs = [Breadcrumb(timestamp: 1, message: "from the launcher", category: "stderr")]
        start.customKeys = [CustomKey(key: "early", value: .bool(true))]
        let file = try StateFile.create(at: path, context: start)
        file.log("checkout started", timestamp: 1_795_000_001.5)
        file.log("", timestamp: 2)
        file.setCustomValue(.string("v"), forKey: "s")
        file.setCustomValue(.int(-7), forKey: "i")
        file.setCustomValue(.double(2.5), forKey: "d")
        file.setCustomValue(.int(8), forKey: "s")  // keeps its place, changes its type
        file.setUserID("user-2")
        file.setPID(99)
        file.incrementErrors()
        file.incrementErrors()
        file.markExited()

        let read = try StateFile.read(at: path)
        #expect(read.sessionID == start.sessionID)
        #expect(read.installID == start.installID)
        #expect(read.userID == "user-2")
        #expect(read.appID == "com.example.app")
        #expect(read.appVersion == "2.4.1")
        #expect(read.appBuild == "381")
        #expect(read.environment == "staging")
        #expect(read.startedAt == 1_795_000_000.25)
        #expect(read.pid == 99)
        #expect(read.errors == 2)
        #expect(read.exitedNormally)
        #expect(
            read.breadcrumbs == [
                Breadcrumb(timestamp: 1, message: "from the launcher", category: "stderr"),
                Breadcrumb(timestamp: 1_795_000_001.5, message: "checkout started"),
                Breadcrumb(timestamp: 2, message: ""),
            ])
        #expect(read.customKeys.map(\.key) == ["early", "s", "i", "d"])
        #expect(read.customKeys.map(\.value) == [.bool(true), .int(8), .int(-7), .double(2.5)])
        #expect(file.snapshot() == read)

        // Removing a key and clearing the user id; a key set again goes to the end.
        file.setCustomValue(nil, forKey: "s")
        file.setUserID(nil)
        file.setCustomValue(.string("again"), forKey: "s")
        let after = try StateFile.read(at: path)
        #expect(after.customKeys.map(\.key) == ["early", "i", "d", "s"])
        #expect(after.userID == nil)
    }

    @Test func openSeesWhatAnotherMappingWrote() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let launcher = try StateFile.create(at: path, context: Self.context())
        let child = try StateFile.open(at: path)
        child.setCustomValue(.string("1"), forKey: "a")
        child.log("hello", timestamp: 3)
        let seen = try #require(launcher.snapshot())
        #expect(seen.customKeys == [CustomKey(key: "a", value: .string("1"))])
        #expect(seen.breadcrumbs.map(\.message) == ["hello"])
        // A reopened file knows its keys: setting one again does not make a second slot.
        let again = try StateFile.open(at: path)
        again.setCustomValue(.string("2"), forKey: "a")
        #expect(try StateFile.read(at: path).customKeys == [CustomKey(key: "a", value: .string("2"))])
    }

    @Test func breadcrumbsRollAt64KBOldestFirst() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let file = try StateFile.create(at: path, context: Self.context())
        let line = String(repeating: "x", count: 200)
        for i in 0..<2000 { file.log("\(i) \(line)", timestamp: Double(i)) }
        let crumbs = try StateFile.read(at: path).breadcrumbs
        // Every record costs at least the server's estimate (32 + message bytes), so what is kept fits 64 KB.
        let estimate = crumbs.reduce(0) { $0 + 32 + $1.message.utf8.count }
        #expect(estimate <= Limits.breadcrumbBytes)
        #expect(estimate > Limits.breadcrumbBytes * 95 / 100)  // and nearly all of it is used
        #expect(crumbs.last?.message.hasPrefix("1999 ") == true)
        // Oldest dropped first: the kept ones are the newest, consecutive and in order.
        let numbers = crumbs.map { Int($0.message.split(separator: " ")[0])! }
        #expect(numbers == Array((2000 - numbers.count)..<2000))
        #expect(crumbs.map(\.timestamp) == numbers.map(Double.init))
    }

    @Test func longBreadcrumbIsCutAndRingSurvivesBigRecords() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let file = try StateFile.create(at: path, context: Self.context())
        for i in 0..<20 { file.log(String(repeating: "é", count: 20_000) + "\(i)", timestamp: 0) }
        file.log("last", timestamp: 0)
        let crumbs = try StateFile.read(at: path).breadcrumbs
        #expect(crumbs.last?.message == "last")
        for crumb in crumbs.dropLast() {
            #expect(crumb.message.utf8.count == StateFile.Layout.maxMessageBytes)
            #expect(crumb.message.allSatisfy { $0 == "é" })
        }
    }

    @Test func sixtyFourKeysAndOneKilobyteCuts() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let file = try StateFile.create(at: path, context: Self.context())
        for i in 0..<70 { file.setCustomValue(.int(Int64(i)), forKey: "k\(i)") }
        file.setCustomValue(.int(1000), forKey: "k3")  // an existing key still changes
        #expect(file.droppedKeys == 6)
        // A long key and value are cut at 1 KB on a character boundary (a 3-byte character never split).
        file.setCustomValue(nil, forKey: "k0")
        let long = String(repeating: "€", count: 400)  // 1200 bytes
        file.setCustomValue(.string(long), forKey: long)
        file.setUserID(long)
        let read = try StateFile.read(at: path)
        #expect(read.customKeys.count == 64)
        #expect(read.customKeys.map(\.key).prefix(3) == ["k1", "k2", "k3"])
        #expect(read.customKeys.first { $0.key == "k3" }?.value == .int(1000))
        #expect(!read.customKeys.contains { $0.key == "k64" })
        let cut = try #require(read.customKeys.last)
        #expect(cut.key == String(repeating: "€", count: 341))
        #expect(cut.value == .string(String(repeating: "€", count: 341)))
        #expect(read.userID == String(repeating: "€", count: 341))
        #expect(cutString("ab👍🏽", 5) == "ab")  // a grapheme is never split
    }

    @Test func hostileFilesNeverTrap() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let file = try StateFile.create(at: path, context: Self.context())
        for i in 0..<300 { file.log("crumb \(i)", timestamp: Double(i)) }
        for i in 0..<10 { file.setCustomValue(.string("value \(i)"), forKey: "key \(i)") }
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        let hostile = folder.path + "/hostile.state"

        func attempt(_ bytes: Data) -> Bool {
            FileManager.default.createFile(atPath: hostile, contents: bytes)
            return (try? StateFile.read(at: hostile)) != nil
        }
        // Truncated anywhere, empty, garbage: refused.
        #expect(!attempt(Data()))
        #expect(!attempt(good.prefix(100)))
        #expect(!attempt(good.prefix(good.count - 1)))
        var random = SystemRandomNumberGenerator()
        #expect(!attempt(Data((0..<good.count).map { _ in UInt8.random(in: 0...255, using: &random) })))
        // A newer version is refused, not misread.
        var newer = good
        newer[8] = 2
        #expect(!attempt(newer))
        // Hostile ring counters: refused.
        var ring = good
        ring.replaceSubrange(80..<88, with: withUnsafeBytes(of: UInt64.max) { Data($0) })
        #expect(!attempt(ring))
        // Every field overwritten with extremes, one at a time, anywhere in the header, slots and ring: never traps.
        let offsets = Array(stride(from: 0, to: 512, by: 4)) + Array(stride(from: 0, to: good.count, by: 509))
        for offset in offsets {
            for pattern: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, 0x0001_0000] {
                var bytes = good
                guard offset + 4 <= bytes.count else { continue }
                bytes.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: pattern) { Data($0) })
                _ = attempt(bytes)
            }
        }
        // Random noise in the ring: still a context, with at most the breadcrumbs that were there.
        var noisy = good
        for i in StateFile.Layout.ringOffset..<(StateFile.Layout.ringOffset + 4096) {
            noisy[i] = UInt8.random(in: 0...255, using: &random)
        }
        FileManager.default.createFile(atPath: hostile, contents: noisy)
        if let read = try? StateFile.read(at: hostile) { #expect(read.breadcrumbs.count <= 300) }
        // The untouched file still reads.
        #expect(attempt(good))
        // open() refuses a file of the wrong size instead of mapping past its end.
        FileManager.default.createFile(atPath: hostile, contents: good.prefix(4096))
        #expect(throws: SDKError.self) { try StateFile.open(at: hostile) }
    }

    @Test func lockTellsWhetherTheRunLives() throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        var file: StateFile? = try StateFile.create(at: path, context: Self.context())
        #expect(file?.holdsLock == true)
        #expect(StateFile.isHeld(at: path))
        file = nil
        #expect(!StateFile.isHeld(at: path))
        #expect(!StateFile.isHeld(at: folder.path + "/missing.state"))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func concurrentWritersKeepTheFileConsistent() async throws {
        let folder = try TempFolder()
        let path = folder.path + "/run.state"
        let file = try StateFile.create(at: path, context: Self.context())
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask {
                    for i in 0..<2000 {
                        file.log("t\(t) \(i)", timestamp: Double(i))
                        file.setCustomValue(.int(Int64(i)), forKey: "t\(t)")
                    }
                }
            }
        }
        let read = try StateFile.read(at: path)
        #expect(read.customKeys.count == 4)
        #expect(read.customKeys.allSatisfy { $0.value == .int(1999) })
        // The ring is full and every record whole; each thread's kept crumbs are a gap-free run ending at its
        // newest (the oldest records go first), and the newest record of all is some thread's last.
        #expect(read.breadcrumbs.count > 1000)
        #expect(read.breadcrumbs.allSatisfy { $0.message.wholeMatch(of: /t[0-3] \d+/) != nil })
        for t in 0..<4 {
            let mine = read.breadcrumbs.filter { $0.message.hasPrefix("t\(t) ") }.map {
                Int($0.message.split(separator: " ")[1])!
            }
            if let first = mine.first { #expect(mine == Array(first...1999)) }
        }
        #expect(read.breadcrumbs.last?.message.hasSuffix(" 1999") == true)
    }
}
