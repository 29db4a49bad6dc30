import HTTPTypes
import Hummingbird

/// The parameters an ingest route takes beside its body: query parameters, or the same names as
/// `X-Faultline-*` headers (`app_version` ↔ `X-Faultline-App-Version`).
///
/// A parameter or `X-Faultline-*` header the route does not know is refused (400 `unknown_parameter` naming
/// it) instead of ignored: a typo such as `relase=1.2` would otherwise store the crash without its release,
/// and nobody would notice until the release's crash-free numbers came out wrong. A name given twice (twice
/// in the query, or as a parameter and a header) with different values is refused too.
struct IngestParameters {
    /// Values by parameter name (the query spelling).
    private(set) var values: [String: String] = [:]

    /// The header spelling of a parameter name: `app_version` → `X-Faultline-App-Version`.
    static func headerName(_ parameter: String) -> String {
        "X-Faultline-"
            + parameter.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
    }

    /// Reads and checks the parameters of `request` against `known`.
    /// - Throws: `APIError` 400 `unknown_parameter` for a name not in `known`, `conflicting_parameter` for a name
    ///   given twice with different values.
    init(_ request: Request, known: [String]) throws {
        let names = Set(known)
        func allowed() -> String {
            known.isEmpty ? "this endpoint takes no parameters" : "this endpoint takes " + known.joined(separator: ", ")
        }
        for (rawName, rawValue) in request.uri.queryParameters {
            let name = String(rawName)
            guard names.contains(name) else {
                throw APIError(
                    status: .badRequest, code: "unknown_parameter",
                    message: "unknown query parameter \"\(Self.printable(name))\"; \(allowed())",
                    field: Self.printable(name))
            }
            try set(name, String(rawValue), source: name)
        }
        for field in request.headers {
            let lower = field.name.canonicalName
            guard lower.hasPrefix("x-faultline-") else { continue }
            let name = String(lower.dropFirst("x-faultline-".count).map { $0 == "-" ? "_" : $0 })
            guard names.contains(name) else {
                throw APIError(
                    status: .badRequest, code: "unknown_parameter",
                    message: "unknown header \"\(field.name.rawName)\"; \(allowed()) (as X-Faultline-… headers too)",
                    field: field.name.rawName)
            }
            try set(name, field.value, source: field.name.rawName)
        }
    }

    private mutating func set(_ name: String, _ value: String, source: String) throws {
        if let earlier = values[name], earlier != value {
            throw APIError(
                status: .badRequest, code: "conflicting_parameter",
                message: "\(name) is given twice with different values (\(source) says something else)", field: name)
        }
        values[name] = value
    }

    subscript(_ name: String) -> String? { values[name] }

    /// `name`, or its alias; both given and different is a 400 naming the alias.
    func value(_ name: String, alias: String) throws -> String? {
        switch (values[name], values[alias]) {
        case (let a?, let b?) where a != b:
            throw APIError(
                status: .badRequest, code: "conflicting_parameter",
                message:
                    "\(alias) is an alias of \(name), and the two differ (\"\(Self.printable(b))\" vs \"\(Self.printable(a))\"); send one",
                field: alias)
        case (let a?, _): return a
        case (nil, let b): return b
        }
    }

    /// A name or value as it may be echoed in an error: at most 64 characters, control characters as `?`.
    static func printable(_ text: String) -> String {
        let cut = text.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : Character($0) }
        return String(cut) + (text.unicodeScalars.count > 64 ? "…" : "")
    }
}
