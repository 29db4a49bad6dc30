import FaultlineCore

/// A fingerprint merged into the issue of the page, with the form that splits it back out (`<id>/unmerge`).
struct MergedFingerprintView {
    var fingerprint: String
    /// The number of the issue that had it, when known.
    var formerIssue: String?
    var mergedAt: TimeView
    var unmergeActionHref: String
}

extension IssuePage {
    /// Lists `merged` (the fingerprints merged into the issue) with their unmerge forms.
    mutating func showMerged(_ merged: [MergedFingerprint]) {
        let action = "\(issueNumber)/unmerge"
        mergedFingerprints = merged.map {
            MergedFingerprintView(
                fingerprint: $0.fingerprint, formerIssue: $0.formerIssue.map { String($0.rawValue) },
                mergedAt: TimeView($0.mergedAt), unmergeActionHref: action)
        }
        hasMergedFingerprints = !mergedFingerprints.isEmpty
    }

    /// Says how many events of this issue were refused past the project's quota (counted by the client's fingerprint,
    /// never stored; not in the issue's event count).
    mutating func showDropped(_ dropped: Int) {
        droppedText = dropped > 0 ? Format.count(dropped, "event") + " more, counted but not stored" : nil
    }
}
