import FaultlineCore

/// A release named on a page, linked when its page exists.
struct ReleaseLink {
    var releaseName: String
    var releaseHref: String
    var releaseLinked: Bool

    /// - Parameter rendered: releases that have a page; others are shown as text.
    init(_ release: String, slug: ProjectSlug, from path: String, rendered: Set<String>) {
        releaseName = release
        releaseLinked = rendered.contains(release)
        releaseHref = releaseLinked ? SitePaths.relative(from: path, to: SitePaths.release(slug, release)) : ""
    }
}
