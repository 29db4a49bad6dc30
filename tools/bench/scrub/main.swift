import Foundation

func load(_ path: String) -> [[UInt8]] {
    let text = try! String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n").map { Array($0.utf8) }
}
let scrubber = Scrubber(settings: PrivacySettings())
func measure(_ name: String, _ docs: [[UInt8]], rounds: Int = 15, _ body: ([UInt8]) throws -> Int) rethrows {
    var best = Double.infinity
    var sink = 0
    for _ in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        for d in docs { sink &+= try body(d) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        best = min(best, seconds)
    }
    let bytes = docs.reduce(0) { $0 + $1.count }
    print(
        String(
            format: "%-40@ %7.1f µs/report  %6.0f MB/s  (%d reports, avg %d bytes, sink %d)", name as NSString,
            best / Double(docs.count) * 1e6, Double(bytes) / best / 1e6, docs.count, bytes / docs.count, sink & 1))
}
let plain = load("plain.jsonl")
let secrets = load("secrets.jsonl")
let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "all"
if mode == "all" || mode == "v" {
    try measure("validate only (JSONReader.skipValue)", plain) { d in
        try JSONReader.with(d, range: 0..<d.count) { r in
            try r.skipValue(); return 1
        }
    }
}
if mode == "all" || mode == "s" {
    try measure("scrub, nothing matches", plain) { d in try JSONScrubbing.scrub(d, scrubber: scrubber) == nil ? 1 : 0 }
}
if mode == "all" || mode == "r" {
    try measure("scrub, every report rewritten", secrets) { d in
        try JSONScrubbing.scrub(d, scrubber: scrubber)?.count ?? 0
    }
}
