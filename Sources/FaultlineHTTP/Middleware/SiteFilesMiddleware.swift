import FaultlineCore
import Hummingbird

/// Serves the rendered site (Hummingbird's `FileMiddleware`), with three rules in front of it:
///
/// - never under an open route or a reserved name (`/api/…`, `/metrics`…): those paths skip the dashboard guard,
///   so a site folder there would be public;
/// - a path with empty segments (`//beta`, `/%2F%2Fbeta`) is redirected to its collapsed form (`/beta`): the file
///   middleware would answer a folder's `//beta` with `Location: //beta/`, which a browser reads as the host `beta`;
/// - a path with a backslash or a control character is not a site path (404).
struct SiteFilesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let files: FileMiddleware<Context, LocalFileSystem>

    init(folder: String) {
        files = FileMiddleware(folder, searchForIndexHtml: true)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        let raw = request.uri.path
        if DashboardPaths.isOpenRoute(raw) { return try await next(request, context) }
        guard let decoded = DashboardPaths.percentDecoded(raw), decoded.hasPrefix("/") else { return try await next(request, context) }
        if ProjectSlug.reserved.contains(String(DashboardPaths.firstSegment(decoded))) {
            return try await next(request, context)
        }
        if decoded.unicodeScalars.contains(where: { $0 == "\\" || $0.value < 0x20 || $0.value == 0x7f }) {
            return try await next(request, context)
        }
        if decoded.contains("//") {
            var collapsed = ""
            for segment in raw.split(separator: "/", omittingEmptySubsequences: true) {
                collapsed += "/" + segment
            }
            // Segments that decode to "/" (`%2F`) are dropped: no site path has them.
            let target = collapsed.isEmpty ? "/" : collapsed
            guard DashboardPaths.isLocalRedirect(target), DashboardPaths.percentDecoded(target)?.contains("//") == false else {
                return try await next(request, context)
            }
            return Response(status: .movedPermanently, headers: [.location: target])
        }
        return try await files.handle(request, context: context, next: next)
    }
}
