import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one place where errors become HTTP statuses and JSON bodies.
///
/// Every error body is `{"error": code, "message": text, "field": path?, "detail": text}` (`detail` repeats the
/// message, with the field, for Sentry clients, which print it). A 500 never echoes the underlying message
/// (it may hold paths or SQL); it is logged instead.
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var field: String?
    var headers: HTTPFields = [:]
    /// The issue a merged issue's number now names (`mergedInto(_:from:query:keepMethod:)`).
    var mergedInto: Int64? = nil

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        let body = ErrorBody(
            error: code, message: message, field: field, detail: field.map { "\($0): \(message)" } ?? message,
            mergedInto: mergedInto, url: mergedInto == nil ? nil : headers[.location])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(body)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The same answer in Sentry's shape, `{"detail": "…"}`: sentry-cli prints `detail` and nothing else.
    func sentryResponse(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        var detail = field.map { "\($0): \(message)" } ?? message
        if status == .unauthorized {
            detail += " (sentry-cli: pass the project's upload token as SENTRY_AUTH_TOKEN or --auth-token)"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(["detail": detail])
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    struct ErrorBody: Encodable {
        var error: String
        var message: String
        var field: String?
        var detail: String
        var mergedInto: Int64? = nil
        var url: String? = nil
        enum CodingKeys: String, CodingKey {
            case error, message, field, detail, mergedInto = "merged_into", url
        }
    }

    /// A merged issue's number: a redirect to the issue it was merged into (`Location`, and `merged_into` and `url` in
    /// the body for clients that do not follow it), 302 for a read or 307 to repeat a change there.
    static func mergedInto(_ survivor: IssueID, from id: IssueID, query: String?, keepMethod: Bool) -> APIError {
        let location = "/api/v1/issues/\(survivor.rawValue)" + (query.map { $0.isEmpty ? "" : "?\($0)" } ?? "")
        return APIError(
            status: keepMethod ? .temporaryRedirect : .found, code: "merged",
            message: "issue \(id.rawValue) was merged into issue \(survivor.rawValue)", headers: [.location: location],
            mergedInto: survivor.rawValue)
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(
            status: .unauthorized, code: "unauthorized", message: message,
            headers: [.wwwAuthenticate: "Bearer realm=\"faultline\""])
    }

    static func badRequest(_ message: String, field: String? = nil) -> APIError {
        APIError(status: .badRequest, code: "invalid_field", message: message, field: field)
    }

    static func forbidden(_ message: String) -> APIError {
        APIError(status: .forbidden, code: "forbidden", message: message)
    }

    /// Too many failed attempts to authenticate from one address.
    static func tooManyAttempts(retryAfter seconds: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_attempts",
            message: "too many failed attempts from this address; try again in \(seconds) seconds",
            headers: [.retryAfter: String(seconds)])
    }

    static func notFound(_ message: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: message)
    }

    /// 507 while the data folder's disk is full: the client keeps its report and retries after `Retry-After`.
    static func storageFull(retryAfter seconds: Int) -> APIError {
        APIError(
            status: .insufficientStorage, code: "storage_full",
            message:
                "the server's disk is full and it accepts no writes for now; keep the data and retry after \(seconds) s",
            headers: [.retryAfter: String(seconds)])
    }

    /// The Sentry routes' answer while the disk is full: 429 with `Retry-After` and `X-Sentry-Rate-Limits`
    /// (all categories), which Sentry SDKs understand as "back off", keeping or counting what they drop.
    static func sentryStorageFull(retryAfter seconds: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "storage_full",
            message: "the server's disk is full and it accepts no events for now; retry after \(seconds) s",
            headers: [
                .retryAfter: String(seconds),
                .sentryRateLimits: "\(seconds)::organization:storage_full",
            ])
    }

    /// `503 database_unavailable` with `Retry-After`: the database is down, restarting, cut off or too slow to
    /// answer within the deadline. Nothing says the request was stored; sending it again is safe.
    static func databaseUnavailable(retryAfter seconds: Int) -> APIError {
        APIError(
            status: .serviceUnavailable, code: "database_unavailable",
            message: "the database cannot be reached now; nothing is known to be stored: retry after \(seconds) s",
            headers: [.retryAfter: String(seconds)])
    }

    /// Maps any error to the API's answer.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as FormatError:
            let status: HTTPResponse.Status
            switch error.code {
            case .tooLarge: status = .contentTooLarge
            case .unsupportedEncoding, .unsupportedMediaType: status = .unsupportedMediaType
            default: status = .badRequest
            }
            return APIError(status: status, code: error.code.description, message: error.message, field: error.field)
        case let error as IngestError:
            switch error.code {
            case .rateLimited:
                return APIError(
                    status: .tooManyRequests,
                    code: error.limitedBy.isQuota ? "quota_reached" : "rate_limited",
                    message: error.message, headers: [.retryAfter: String(error.retryAfter ?? 1)])
            case .diskFull:
                return storageFull(retryAfter: error.retryAfter ?? 30)
            case .storageFailed:
                return APIError(
                    status: .internalServerError, code: "internal", message: "the request could not be stored; retry")
            case .unavailable:
                return databaseUnavailable(retryAfter: error.retryAfter ?? IngestService.unavailableRetryAfterSeconds)
            case .quotaExceeded:
                return APIError(
                    status: .tooManyRequests, code: "quota_exceeded", message: error.message,
                    headers: error.retryAfter.map { [.retryAfter: String($0)] } ?? [:])
            }
        case let error as StorageError where error.code == .unavailable:
            return databaseUnavailable(retryAfter: IngestService.unavailableRetryAfterSeconds)
        case let error as IssueMergeError:
            return APIError(
                status: error.isNotFound ? .notFound : .badRequest,
                code: error.isNotFound ? "not_found" : "merge_refused",
                message: error.description, field: error.field)
        case let error as WebhookTargetProblem:
            return APIError(
                status: .badRequest, code: error.code.rawValue, message: error.message, field: "webhook_url")
        case let error as TrackerURLError:
            return badRequest(error.problem, field: error.field)
        case let error as ProjectError:
            return APIError(status: .badRequest, code: error.code.rawValue, message: error.message, field: "slug")
        case let error as DebugFileError:
            let status: HTTPResponse.Status = error.code == .quotaExceeded ? .contentTooLarge : .badRequest
            return APIError(status: status, code: error.code.rawValue, message: error.message)
        case let error as ChunkUploadError:
            let status: HTTPResponse.Status = error.code == .chunkTooLarge ? .contentTooLarge : .badRequest
            return APIError(status: status, code: error.code.rawValue, message: error.message)
        case is NIOTooManyBytesError:
            // The rest of the body is not read: the connection closes after the answer.
            return APIError(
                status: .contentTooLarge, code: "too_large",
                message: "the body is larger than the limit for this route",
                headers: [.connection: "close"])
        case let error as HTTPParserError:
            // The body broke the HTTP framing (a malformed chunk size, say): the client's fault, and the
            // connection cannot be trusted for another request.
            return APIError(
                status: .badRequest, code: "malformed_http", message: "the request is not valid HTTP/1.1 (\(error))",
                headers: [.connection: "close"])
        case let error as HTTPError:
            let code: String
            switch error.status {
            case .contentTooLarge: code = "too_large"
            case .notFound: code = "not_found"
            case .methodNotAllowed: code = "method_not_allowed"
            case .unauthorized: code = "unauthorized"
            default: code = error.status.code >= 500 ? "internal" : "bad_request"
            }
            let message = error.status.code >= 500 ? "internal error" : (error.body ?? error.status.reasonPhrase)
            return APIError(status: error.status, code: code, message: message, headers: error.headers)
        default:
            return APIError(status: .internalServerError, code: "internal", message: "internal error")
        }
    }
}

extension HTTPResponse.Status {
    /// 507 (RFC 4918): the server cannot store what the request carries, for now.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
}

extension HTTPField.Name {
    /// Relay's rate-limit header: `seconds:categories:scope:reason` entries, comma-separated, which Sentry SDKs read
    /// on any status and obey per category.
    static let sentryRateLimits = HTTPField.Name("X-Sentry-Rate-Limits")!
}
