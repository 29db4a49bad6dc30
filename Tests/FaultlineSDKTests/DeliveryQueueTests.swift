import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

@Suite struct DeliveryQueueTests {
    func json(_ n: Int, padding: Int = 0) -> [UInt8] {
        Array("{\"n\":\(n),\"pad\":\"\(String(repeating: "x", count: padding))\"}".utf8)
    }

    func id(_ n: Int) -> String { String(format: "%032x", n) }

    @Test func itemsComeBackOldestFirstWithTheirBodies() throws {
        let folder = try TempFolder("sdk-queue")
        let queue = try DeliveryQueue(directory: folder.file("queue"))
        try queue.enqueue(kind: .session, id: id(1), json: json(1))
        try queue.enqueue(kind: .crash, id: id(2), json: json(2))
        try queue.enqueue(kind: .nonfatal, id: id(3), json: json(3))
        let items = queue.pending()
        #expect(items.map(\.kind) == [.session, .crash, .nonfatal])
        #expect(items.map(\.id) == [id(1), id(2), id(3)])
        for (i, item) in items.enumerated() {
            let body = try #require(queue.body(of: item))
            #expect(Gzip.decompress(body) == json(i + 1))
            #expect(item.path.hasPrefix(folder.file("queue") + "/"))
            #expect(item.path.contains(item.kind.rawValue) && item.path.contains(item.id))
        }
        // Removal, twice (the second is another process's late removal): not an error.
        queue.remove(items[1])
        queue.remove(items[1])
        #expect(queue.pending().map(\.id) == [id(1), id(3)])
        #expect(queue.body(of: items[1]) == nil)
        // New items go after the ones left, even when the newest was removed.
        try queue.enqueue(kind: .crash, id: id(4), json: json(4))
        #expect(queue.pending().map(\.id) == [id(1), id(3), id(4)])
        queue.removeAll(kinds: [.session])
        #expect(queue.pending().map(\.id) == [id(3), id(4)])
        queue.removeAll()
        #expect(queue.pending().isEmpty)
        #expect(queue.dropped() == 0)
    }

    @Test func countBoundDropsTheOldestAndCountsThem() throws {
        let folder = try TempFolder("sdk-queue")
        let queue = try DeliveryQueue(directory: folder.path, maxItems: 5)
        for n in 1...12 { try queue.enqueue(kind: n % 2 == 0 ? .crash : .session, id: id(n), json: json(n)) }
        #expect(queue.pending().map(\.id) == (8...12).map(id))
        #expect(queue.dropped() == 7)
        // The counter is on disk: a second queue on the folder (another process) sees it.
        #expect(try DeliveryQueue(directory: folder.path).dropped() == 7)
    }

    @Test func byteBoundDropsTheOldest() throws {
        let folder = try TempFolder("sdk-queue")
        // Random padding does not compress: each item is about 3 KB on disk.
        func noise(_ n: Int) -> [UInt8] {
            var g = SystemRandomNumberGenerator()
            return Array("{\"n\":\(n),\"pad\":\"".utf8)
                + (0..<4000).map { _ in UInt8.random(in: 0x61...0x7a, using: &g) } + Array("\"}".utf8)
        }
        let queue = try DeliveryQueue(directory: folder.path, maxItems: 1000, maxBytes: 10_000)
        for n in 1...10 { try queue.enqueue(kind: .crash, id: id(n), json: noise(n)) }
        let left = queue.pending()
        #expect(queue.totalBytes() <= 10_000)
        #expect(left.count >= 2 && left.count < 10)
        #expect(left.last?.id == id(10))
        #expect(left.map(\.id) == (11 - left.count...10).map(id))
        #expect(queue.dropped() == 10 - left.count)
    }

    @Test func anItemOverTheByteBoundAloneIsRefusedAndCounted() throws {
        let folder = try TempFolder("sdk-queue")
        let queue = try DeliveryQueue(directory: folder.path, maxBytes: 100)
        var big: [UInt8] = []
        var g = SystemRandomNumberGenerator()
        for _ in 0..<1000 { big.append(UInt8.random(in: 0x61...0x7a, using: &g)) }
        #expect(throws: SDKError.self) { try queue.enqueue(kind: .crash, id: id(1), json: big) }
        #expect(queue.pending().isEmpty)
        #expect(queue.dropped() == 1)
    }

    @Test func atMostEightNonFatalsTheOldestGo() throws {
        let folder = try TempFolder("sdk-queue")
        let queue = try DeliveryQueue(directory: folder.path)
        try queue.enqueue(kind: .crash, id: id(100), json: json(100))
        for n in 1...11 { try queue.enqueue(kind: .nonfatal, id: id(n), json: json(n)) }
        try queue.enqueue(kind: .session, id: id(200), json: json(200))
        let items = queue.pending()
        #expect(items.filter { $0.kind == .nonfatal }.map(\.id) == (4...11).map(id))
        // Crashes and sessions are not non-fatals: they stay.
        #expect(items.first?.id == id(100))
        #expect(items.last?.id == id(200))
        #expect(queue.dropped() == 3)
    }

    @Test func garbageInTheFolderIsIgnoredAndNeverTraps() throws {
        let folder = try TempFolder("sdk-queue")
        let dir = folder.path
        let queue = try DeliveryQueue(directory: dir)
        // Names that are not items, a folder and a symlink with item names, an item of garbage, an empty item,
        // a hostile counter file, a name with a huge sequence.
        _ = try folder.write("notes.txt", "hello")
        _ = try folder.write("0000000000000001-crash-.gz", "x")
        _ = try folder.write("0000000000000002-bogus-abc.gz", "x")
        _ = try folder.write("000000000000000x-crash-abc.gz", "x")
        _ = try folder.write("0000000000000003-crash-ab$c.gz", "x")
        try FileManager.default.createDirectory(
            atPath: dir + "/0000000000000004-crash-dir.gz", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: dir + "/0000000000000005-crash-link.gz", withDestinationPath: "/etc/passwd")
        _ = try folder.write("0000000000000006-crash-garbage.gz", "not gzip at all, not even close")
        _ = try folder.write("0000000000000007-nonfatal-empty.gz", "")
        _ = try folder.write(".counters", "dropped 99999999999999999999999999\nrejected -5\n\u{0}\u{1}")
        _ = try folder.write("9999999999999999-session-late.gz", "x")
        let items = queue.pending()
        #expect(items.map(\.id) == ["garbage", "empty", "late"])
        for item in items { #expect(queue.body(of: item) == nil) }
        #expect(queue.dropped() == 0)
        #expect(queue.rejected() == 0)
        // Enqueueing still works: the sequence space is used up (the "late" item), so the items are renumbered
        // in order and the new one goes last.
        let item = try queue.enqueue(kind: .crash, id: id(1), json: json(1))
        let after = queue.pending()
        #expect(after.map(\.id) == ["garbage", "empty", "late", id(1)])
        #expect(after.last == item)
        #expect(queue.body(of: item).flatMap { Gzip.decompress($0) } == json(1))
        queue.reject(after[0])
        #expect(queue.rejected() == 1)
        #expect(FileManager.default.fileExists(atPath: dir + "/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
    }

    @Test func badIDsAreRefused() throws {
        let folder = try TempFolder("sdk-queue")
        let queue = try DeliveryQueue(directory: folder.path)
        for bad in ["", "../../etc", "a/b", "a.b", String(repeating: "a", count: 129), "é"] {
            #expect(throws: SDKError.self) { try queue.enqueue(kind: .crash, id: bad, json: json(1)) }
        }
        #expect(queue.pending().isEmpty)
    }

    @Test func twoProcessesShareOneFolder() throws {
        // Two queues on one folder from many threads at once: every item lands, none twice, names unique,
        // the bound holds.
        let folder = try TempFolder("sdk-queue")
        let a = try DeliveryQueue(directory: folder.path, maxItems: 150)
        let b = try DeliveryQueue(directory: folder.path, maxItems: 150)
        DispatchQueue.concurrentPerform(iterations: 200) { n in
            _ = try? (n % 2 == 0 ? a : b).enqueue(kind: .crash, id: id(n), json: json(n))
        }
        let items = a.pending()
        #expect(items.count == 150)
        #expect(Set(items.map(\.id)).count == 150)
        #expect(a.dropped() == 50)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix(".tmp-")
        }
        #expect(leftovers.isEmpty)
    }
}
