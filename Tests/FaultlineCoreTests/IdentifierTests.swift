import FaultlineCore
import Testing

@Suite struct IdentifierTests {
    @Test func eventIDNormalisesBothSpellingsToOneID() throws {
        let hyphenated = try #require(EventID("7077E450-fa6f-4594-850b-fed9428d1d98"))
        let plain = try #require(EventID("7077e450fa6f4594850bfed9428d1d98"))
        #expect(hyphenated == plain)
        #expect(plain.rawValue == "7077e450fa6f4594850bfed9428d1d98")
    }

    @Test(arguments: [
        "", "xyz", "7077e450fa6f4594850bfed9428d1d9", "7077e450-fa6f4594-850b-fed9428d1d98x",
        "7077e450fa6f-4594-850b-fed9428d1d98", "7077e450-fa6f-4594-850b-fed9428d1d9g",
    ])
    func eventIDRejectsMalformedIDs(_ text: String) {
        #expect(EventID(text) == nil)
    }

    @Test func buildIDAcceptsHexAndLowercasesIt() throws {
        let id = try #require(BuildID("ABA11AEFF7E7E9E2E1BC84464F53A7E183A8930A"))
        #expect(id.rawValue == "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")
        #expect(BuildID(bytes: [0xab, 0x01])?.rawValue == "ab01")
    }

    @Test(arguments: ["../etc", "abc", "", "zz", String(repeating: "ab", count: 65)])
    func buildIDRejectsAnythingThatIsNotEvenLengthHex(_ text: String) {
        #expect(BuildID(text) == nil)
    }

    @Test func slugRules() {
        #expect(ProjectSlug("my-app_2") != nil)
        #expect(ProjectSlug("My-App") == nil)
        #expect(ProjectSlug("-app") == nil)
        #expect(ProjectSlug("a/b") == nil)
        #expect(ProjectSlug(String(repeating: "a", count: 65)) == nil)
    }

    @Test func hexParsesAddressesWithAndWithoutPrefix() {
        #expect(Hex.parseUInt64("0x7fff0000") == 0x7fff_0000)
        #expect(Hex.parseUInt64("FFFFFFFFFFFFFFFF") == UInt64.max)
        #expect(Hex.parseUInt64("0x1FFFFFFFFFFFFFFFF") == nil)
        #expect(Hex.parseUInt64("0x") == nil)
    }

    @Test func releaseIsTheVersionWithTheBuildBeneathIt() {
        #expect(AppInfo(version: "1.2", build: "45").release == "1.2")
        #expect(AppInfo(version: "1.2", build: "45").releaseBuild == "45")
        #expect(AppInfo(version: "1.2").release == "1.2")
        #expect(AppInfo(build: "45").release == nil)
    }
}
