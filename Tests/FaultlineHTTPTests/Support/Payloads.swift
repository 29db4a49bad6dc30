import CZlib
import Foundation
import NIOCore

/// Realistic report bodies and compression helpers for HTTP tests.
enum Payloads {
    static func eventID(_ n: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", n, n) }
    static func normalized(_ n: Int) -> String { eventID(n).replacingOccurrences(of: "-", with: "") }

    /// A crash report with `frames` raw frames, 20 breadcrumbs and 10 custom keys.
    static func crash(_ n: Int, version: String = "1.0", kind: String = "crash", frames: Int = 40) -> String {
        let frameList = (0..<frames).map {
            #"{"address":"0x\#(String(0x7f00_0000_0000 + $0 * 0x40 + n, radix: 16))","module":"libapp.so"}"#
        }
        let crumbs = (0..<20).map {
            #"{"timestamp":\#(1_795_000_000 + $0),"category":"ui","level":"info","message":"step \#($0)","data":{"screen":"s\#($0)"}}"#
        }
        let keys = (0..<10).map { #""key\#($0)":"value \#($0)""# }
        return """
            {"event_id":"\(eventID(n))","kind":"\(kind)","timestamp":"2026-11-22T05:08:09.152Z",
             "session_id":"session-\(n)","user_id":"user-\(n % 7)","environment":"production",
             "app":{"id":"com.example","version":"\(version)","build":"7"},
             "device":{"model":"Pixel 8","os":"Android","os_version":"15","arch":"arm64"},
             "error":{"type":"SIGSEGV","code":11,"message":"Segmentation fault \(n)"},
             "threads":[{"name":"main","crashed":true,"frames":[\(frameList.joined(separator: ","))]}],
             "modules":[{"name":"libapp.so","build_id":"aba11aeff7e7e9e2e1bc84464f53a7e183a8930a","base_address":"0x7f0000000000","size":1048576}],
             "breadcrumbs":[\(crumbs.joined(separator: ","))],
             "custom_keys":{\(keys.joined(separator: ","))}}
            """
    }

    static func batch(_ ns: some Sequence<Int>) -> String {
        "{\"reports\":[" + ns.map { crash($0) }.joined(separator: ",") + "]}"
    }

    static func session(
        _ id: String, status: String, release: String = "1.0 (7)", errors: Int = 0, seq: Int = 1,
        user: String = "user-1"
    ) -> String {
        #"{"session_id":"\#(id)","user_id":"\#(user)","release":"\#(release)","started":"2026-11-22T05:00:00Z","status":"\#(status)","errors":\#(errors),"seq":\#(seq)}"#
    }

    /// gzip of `bytes`.
    static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        deflateInit2_(
            &stream, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        input.withUnsafeMutableBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                _ = deflate(&stream, Z_FINISH)
            }
        }
        out.removeSubrange(Int(stream.total_out)...)
        return out
    }

    static func gzip(_ text: String) -> ByteBuffer { ByteBuffer(bytes: gzip(Array(text.utf8))) }

    /// A gzip bomb: `members` concatenated gzip members, each inflating to `memberMiB` MiB of zeros.
    /// 100 × 100 MiB ≈ 10 GiB from about 10 MB, built in well under a second.
    static func bomb(memberMiB: Int, members: Int) -> ByteBuffer {
        var stream = z_stream()
        deflateInit2_(
            &stream, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var zeros = [UInt8](repeating: 0, count: 1 << 20)
        var member: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        func pump(_ flush: Int32) {
            repeat {
                chunk.withUnsafeMutableBufferPointer { c in
                    stream.next_out = c.baseAddress
                    stream.avail_out = uInt(c.count)
                    _ = deflate(&stream, flush)
                }
                member += chunk[0..<(chunk.count - Int(stream.avail_out))]
            } while stream.avail_out == 0
        }
        for _ in 0..<memberMiB {
            zeros.withUnsafeMutableBufferPointer { z in
                stream.next_in = z.baseAddress
                stream.avail_in = uInt(z.count)
                pump(Z_NO_FLUSH)
            }
        }
        pump(Z_FINISH)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(member.count * members)
        for _ in 0..<members { buffer.writeBytes(member) }
        return buffer
    }
}
