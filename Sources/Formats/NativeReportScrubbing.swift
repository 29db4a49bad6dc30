import FaultlineCore

extension NativeReports {
    /// Scrubs, then decodes, a native body: the decoded reports and their byte ranges refer to the scrubbed
    /// bytes, which are what must be stored (`scrubbed`, nil when nothing changed: keep the client's bytes).
    ///
    /// A batch element that is not well-formed JSON cannot be scrubbed; it is replaced with `null` in the
    /// scrubbed body (so its bytes are never stored) and refused with the error its decoding gives.
    public static func decode(_ bytes: [UInt8], limits: IngestLimits, scrubber: Scrubber) throws
        -> (decoded: Decoded, scrubbed: [UInt8]?)
    {
        guard scrubber.isActive else { return (try decode(bytes, limits: limits), nil) }
        let wholeError: any Error
        do {
            let scrubbed = try JSONScrubbing.scrub(bytes, scrubber: scrubber)
            return (try decode(scrubbed ?? bytes, limits: limits), scrubbed)
        } catch {
            wholeError = error
        }
        // Some part is malformed: scrub element by element.
        guard case .batch(let ranges) = try JSONBatchSplitter.split(bytes) else {
            // A single report: its decoding error; if it decodes (nested deeper than the scrubber walks), it is
            // refused rather than stored unscrubbed.
            _ = try decode(bytes, limits: limits)
            throw wholeError
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        var failed: [Int: FormatError] = [:]
        for (index, range) in ranges.enumerated() {
            let replacement: [UInt8]?
            do {
                replacement = try JSONScrubbing.scrub(bytes, range: range, scrubber: scrubber)
            } catch {
                let reason = Result { try decodeOne(bytes, range: range, limits: limits) }
                failed[index] = ((reason.failure as? FormatError) ?? (error as? FormatError)
                    ?? FormatError(.malformedJSON, "\(error)")).prefixed("reports[\(index)]")
                replacement = Array("null".utf8)
            }
            guard let replacement else { continue }
            out.append(contentsOf: bytes[copied..<range.lowerBound])
            out.append(contentsOf: replacement)
            copied = range.upperBound
        }
        out.append(contentsOf: bytes[copied...])
        var decoded = try decode(out, limits: limits)
        for (index, error) in failed where index < decoded.items.count { decoded.items[index] = .failure(error) }
        return (decoded, out)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
