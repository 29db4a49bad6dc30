import Formats
import Foundation
import Testing

@Suite struct TimestampsTests {
    @Test(arguments: [
        ("2026-11-22T05:08:09Z", 1_795_324_089.0),
        ("2026-11-22T05:08:09.152247Z", 1_795_324_089.152247),
        ("2026-11-22T07:08:09+02:00", 1_795_324_089.0),
        ("2026-11-22T05:08:09", 1_795_324_089.0),
        ("1970-01-01T00:00:00Z", 0),
        ("2000-02-29T12:00:00Z", 951_825_600),
    ])
    func parsesISO8601(_ text: String, _ expected: Double) throws {
        let date = try #require(Timestamps.parseISO8601(text))
        #expect(abs(date.timeIntervalSince1970 - expected) < 0.000_001)
    }

    @Test func agreesWithFoundationOnManyDates() throws {
        let formatter = ISO8601DateFormatter()
        var seconds = 0.0
        while seconds < 4_000_000_000 {
            let text = formatter.string(from: Date(timeIntervalSince1970: seconds))
            #expect(Timestamps.parseISO8601(text)?.timeIntervalSince1970 == seconds)
            seconds += 3_222_721
        }
    }

    @Test(arguments: [
        "", "2026-13-01T00:00:00Z", "2026-11-22", "2026-11-22T05:08Z", "2026-11-22T05:08:09.Z", "yesterday",
        "2026-11-22T05:08:09Zjunk", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
    ])
    func rejectsWhatIsNotADateTime(_ text: String) {
        #expect(Timestamps.parseISO8601(text) == nil)
    }

    @Test func formatsAndParsesBack() throws {
        let date = Date(timeIntervalSince1970: 1_795_324_089.152)
        let text = Timestamps.formatISO8601(date)
        #expect(text == "2026-11-22T05:08:09.152Z")
        let back = try #require(Timestamps.parseISO8601(text))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
    }
}
