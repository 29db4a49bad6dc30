import FaultlineCore

extension NativeReports {
    /// Scrubs and decodes a native body: the decoded reports and their byte ranges refer to the scrubbed
    /// bytes, which are what must be stored (`scrubbed`, nil when nothing changed: keep the client's bytes).
    /// One report is scrubbed while it is parsed (`singleScrubbing`); anything else first scrubbed, then decoded.
    ///
    /// A batch element that is not well-formed JSON cannot be scrubbed; it is replaced with `null` in the
    /// scrubbed body (so its bytes are never stored) and refused with the error its decoding gives.
    public static func decode(_ bytes: [UInt8], limits: IngestLimits, scrubber: Scrubber) throws
        -> (decoded: Decoded, scrubbed: [UInt8]?)
    {
        guard scrubber.isActive else { return (try decode(bytes, limits: limits), nil) }
        if let (report, scrubbed) = singleScrubbing(bytes, limits: limits, scrubber: scrubber) {
            return (Decoded(isBatch: false, items: [.success(report)]), scrubbed)
        }
        return try decodeScrubbingFirst(bytes, limits: limits, scrubber: scrubber)
    }

    /// A body that is one valid report, scrubbed while it is parsed (`ScrubAsYouParse`): one walk over the bytes
    /// instead of the scrubber's and then the parser's (the scrubber's walk was ~30 % of decoding's instructions).
    /// Nil for anything else, which `decodeScrubbingFirst` answers, so every answer but a success is its answer, and
    /// a success is the same report, range and scrubbed bytes (`NativeReportsTests` and the `native` fuzz target
    /// compare the two).
    package static func singleScrubbing(_ bytes: [UInt8], limits: IngestLimits, scrubber: Scrubber) -> (
        PreparedReport, [UInt8]?
    )? {
        bytes.withUnsafeBufferPointer { buffer -> (PreparedReport, [UInt8]?)? in
            // The body without the whitespace and byte order marks around it, as the scrubber walks it.
            let body = trimmed(buffer)
            var reader = JSONReader(bytes: buffer, range: body)
            reader.scrubbing = ScrubAsYouParse(
                walker: JSONScrubbing.Walker(
                    bytes: buffer, end: body.upperBound, scrubber: scrubber, copied: body.lowerBound))
            guard var report = try? NativeReportParser.parse(&reader, batchKey: true),
                let walker = reader.scrubbing?.walker
            else { return nil }
            let scrubbed = walker.rewritten()
            let range =
                scrubbed.map { out in out.withUnsafeBufferPointer { trimmedObject($0) } } ?? trimmedObject(buffer)
            guard let range, range.count <= limits.maxReportBytes else { return nil }
            limits.apply(to: &report)
            return (PreparedReport(report: report, range: range), scrubbed)
        }
    }

    /// `decode(_:limits:scrubber:)` in two passes: the scrubber rewrites the body, then `decode` reads the rewritten
    /// bytes. What that answers for anything but one valid report, and for one the same as `singleScrubbing`.
    package static func decodeScrubbingFirst(_ bytes: [UInt8], limits: IngestLimits, scrubber: Scrubber) throws
        -> (decoded: Decoded, scrubbed: [UInt8]?)
    {
        guard scrubber.isActive else { return (try decode(bytes, limits: limits), nil) }
        let wholeError: any Error
        do {
            // Without the whitespace and byte order marks around the JSON, which the scrubber's reader would refuse
            // (a rewritten body is stored without them).
            let body = bytes.withUnsafeBufferPointer { trimmed($0) }
            let scrubbed = try JSONScrubbing.scrub(bytes, range: body, scrubber: scrubber)
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
                failed[index] =
                    ((reason.failure as? FormatError) ?? (error as? FormatError)
                        ?? FormatError(.malformedJSON, "\(error)"))
                    .prefixed("reports[\(index)]")
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
