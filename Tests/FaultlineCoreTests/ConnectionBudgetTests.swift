import FaultlineCore
import Testing

@Suite struct ConnectionBudgetTests {
    @Test func theDefaultCapLeavesRoomForTheDatabaseAndDebugFiles() {
        // 1024 (a common default): (1024 - 256) / 2.
        #expect(ConnectionBudget.defaultMaxConnections(openFilesLimit: 1024) == 384)
        // Never more descriptors than the limit leaves after the reserve, even with an upload file each.
        for limit: UInt64 in [300, 512, 1024, 4096, 65536] {
            let cap = UInt64(ConnectionBudget.defaultMaxConnections(openFilesLimit: limit))
            #expect(cap * 2 + ConnectionBudget.reservedFiles <= limit, "\(limit)")
        }
        // A tiny limit still gets a small server; a huge one a bounded cap.
        #expect(ConnectionBudget.defaultMaxConnections(openFilesLimit: 100) == ConnectionBudget.minDefault)
        #expect(ConnectionBudget.defaultMaxConnections(openFilesLimit: 0) == ConnectionBudget.minDefault)
        #expect(ConnectionBudget.defaultMaxConnections(openFilesLimit: UInt64.max) == ConnectionBudget.maxDefault)
    }
}
