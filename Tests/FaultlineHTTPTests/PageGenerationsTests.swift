import FaultlineApp
import Testing

/// A page rendered after a dashboard change is not overwritten by a render cycle that started before it.
@Suite struct PageGenerationsTests {
    @Test func aRenderThatStartedEarlierNeverOverwritesALaterOnesPage() throws {
        let generations = PageGenerations()
        let cycle = generations.start()
        let afterChange = generations.start()
        var written: [String] = []
        try generations.write("a/issues/1.html", generation: afterChange) { written.append("fresh") }
        try generations.write("a/issues/1.html", generation: cycle) { written.append("stale") }
        // Other pages of the earlier render are written as usual, and a later render overwrites.
        try generations.write("a/index.html", generation: cycle) { written.append("overview") }
        try generations.write("a/issues/1.html", generation: generations.start()) { written.append("next cycle") }
        #expect(written == ["fresh", "overview", "next cycle"])
    }
}
