import FaultlineCore
import Testing

/// `BreadcrumbData` replaced a `[String: String]`: it must answer as that dictionary did.
struct BreadcrumbDataTests {
    @Test func aRepeatedNameKeepsItsLastValueInItsFirstPlace() {
        let few = BreadcrumbData([("a", "1"), ("b", "2"), ("a", "3")])
        #expect(few.map(\.key) == ["a", "b"])
        #expect(few["a"] == "3" && few["b"] == "2" && few.count == 2)
        // More names than the pairwise comparison handles: the same answer through the hashing path.
        let many = BreadcrumbData((0..<20).map { (key: "k\($0 % 12)", value: "v\($0)") })
        #expect(many.count == 12)
        #expect(many.map(\.key) == (0..<12).map { "k\($0)" })
        #expect(many["k3"] == "v15" && many["k11"] == "v11")
    }

    @Test func equalityIgnoresOrderAsADictionaryDoes() {
        #expect(BreadcrumbData([("a", "1"), ("b", "2")]) == ["b": "2", "a": "1"])
        #expect(BreadcrumbData([("a", "1"), ("b", "2")]) != ["a": "1", "b": "3"])
        #expect(BreadcrumbData([("a", "1")]) != ["a": "1", "b": "2"])
        let keys = (0..<10).map { "key\($0)" }
        let forwards = BreadcrumbData(keys.map { ($0, $0.uppercased()) })
        let backwards = BreadcrumbData(keys.reversed().map { ($0, $0.uppercased()) })
        #expect(forwards == backwards)
        #expect(forwards != BreadcrumbData(keys.map { ($0, $0) }))
        // Names compare as Strings (canonical equivalence), as the dictionary's keys did.
        #expect(BreadcrumbData([("caf\u{E9}", "1"), ("cafe\u{301}", "2")]).count == 1)
    }
}
