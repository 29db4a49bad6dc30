import Testing

@testable import FaultlineSDK

@Suite struct SDKContractTests {
    @Test func limitsAreCrashlytics() {
        #expect(Limits.customKeys == 64)
        #expect(Limits.unsentNonFatals == 8)
    }
}
