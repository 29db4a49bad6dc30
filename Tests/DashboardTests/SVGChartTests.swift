import Dashboard
import Testing

@Suite("SVG charts and escaping")
struct SVGChartTests {
    @Test("the escaper replaces every character that could end text or an attribute")
    func escaper() {
        #expect(
            Markup.escape("<a href=\"x\" title='y'>&amp;</a>")
                == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;")
        #expect(Markup.escape("tab\tnew\nline") == "tab\tnew\nline")
        #expect(Markup.escape("nul\u{0}bell\u{7}") == "nul\u{fffd}bell\u{fffd}")
        #expect(Markup.escape("ünïcødé 🚀") == "ünïcødé 🚀")
    }

    @Test("labels, titles and notes are escaped inside the SVG")
    func chartEscapes() {
        let hostile = "<script>alert(1)</script>\"'&"
        let svg = SVGChart.rateLine(
            id: "c\"1", title: hostile, description: hostile,
            points: [SVGChart.RatePoint(label: hostile, rate: 0.5, note: hostile)])
        #expect(!svg.contains("<script"))
        #expect(
            svg.contains("<title id=\"c&quot;1-title\">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</title>"))
        let bars = SVGChart.countBars(
            id: "b", title: hostile, description: "d", points: [.init(label: hostile, count: 2, note: hostile)])
        #expect(!bars.contains("<script"))
        #expect(bars.contains("role=\"img\" aria-labelledby=\"b-title b-desc\""))
    }

    @Test("a day without data is a gap in the line, and no data at all says so")
    func gaps() {
        let points = [0.99, nil, 0.98, 0.97].enumerated().map {
            SVGChart.RatePoint(label: "d\($0)", rate: $1, note: "n")
        }
        let svg = SVGChart.rateLine(id: "g", title: "t", description: "d", points: points)
        let path = svg.firstMatch(of: #/ d="([^"]*)"/#).map { String($0.output.1) } ?? ""
        #expect(path.filter { $0 == "M" }.count == 2)
        #expect(path.filter { $0 == "L" }.count == 1)
        #expect(svg.matches(of: #/<circle/#).count == 3)
        let empty = SVGChart.rateLine(
            id: "e", title: "t", description: "d", points: [.init(label: "x", rate: nil, note: "n")])
        #expect(empty.contains(">No data</text>"))
        #expect(!empty.contains("<path"))
    }

    @Test("the rate axis starts a little below the lowest rate and ends at 100 %")
    func rateRange() {
        let svg = SVGChart.rateLine(
            id: "r", title: "t", description: "d",
            points: [0.997, 0.999].map { SVGChart.RatePoint(label: "x", rate: $0, note: "n") })
        #expect(svg.contains(">99 %</text>"))
        #expect(svg.contains(">99.5 %</text>"))
        #expect(svg.contains(">100 %</text>"))
        let wide = SVGChart.rateLine(
            id: "w", title: "t", description: "d", points: [.init(label: "x", rate: 0.62, note: "n")])
        #expect(wide.contains(">50 %</text>"))
        // Deterministic: the same points give the same bytes.
        #expect(
            svg
                == SVGChart.rateLine(
                    id: "r", title: "t", description: "d",
                    points: [0.997, 0.999].map { SVGChart.RatePoint(label: "x", rate: $0, note: "n") }))
    }

    @Test("bars scale to a round maximum and days without events draw nothing")
    func bars() {
        let svg = SVGChart.countBars(
            id: "b", title: "t", description: "d",
            points: [3, 0, 17].enumerated().map { SVGChart.CountPoint(label: "d\($0)", count: $1, note: "n") })
        #expect(svg.contains(">20</text>"))
        #expect(svg.contains(">10</text>"))
        #expect(svg.matches(of: #/<rect [^>]*fill="#2f5d9e"><title>/#).count == 2)
        #expect(!svg.contains("NaN") && !svg.contains("inf"))
        let none = SVGChart.countBars(
            id: "n", title: "t", description: "d", points: [.init(label: "x", count: 0, note: "n")])
        #expect(none.contains(">No events</text>"))
    }
}
