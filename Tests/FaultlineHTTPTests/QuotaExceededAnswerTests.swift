import HTTPTypes
import Pipeline
import Testing

@testable import FaultlineHTTP

/// A minidump over its project's quota (`DebugFileService.checkMinidumpQuota`) is answered 429 `quota_exceeded` with
/// the message that names the quota and a `Retry-After`: Crashpad keeps a report it could not upload and sends it again.
@Suite struct QuotaExceededAnswerTests {
    @Test func aQuotaErrorIs429NamingTheQuota() {
        let error = IngestError(
            .quotaExceeded, "project native has a 2 MiB quota for debug files and minidumps (--debug-file-quota-mb)",
            retryAfter: DebugFileService.minidumpRetryAfter)
        let answer = APIError.from(error)
        #expect(answer.status == .tooManyRequests)
        #expect(answer.code == "quota_exceeded")
        #expect(answer.message.contains("--debug-file-quota-mb"))
        #expect(answer.headers[.retryAfter] == "3600")
        // Without a wait, no header.
        #expect(APIError.from(IngestError(.quotaExceeded, "full")).headers[.retryAfter] == nil)
    }
}
