/// The SDK that sent a report, as it named itself (Sentry's `sdk` interface): shown on the event, apart from the
/// tags and custom keys.
public struct SDKInfo: Sendable, Equatable {
    /// One package the SDK says it is made of (`pypi:sentry-sdk` 2.75.0).
    public struct Package: Sendable, Equatable {
        public var name: String
        public var version: String?
        public init(name: String, version: String? = nil) {
            self.name = name
            self.version = version
        }
    }

    public var name: String
    public var version: String?
    /// The integrations the SDK had enabled, in the order sent.
    public var integrations: [String]
    public var packages: [Package]

    public init(name: String, version: String? = nil, integrations: [String] = [], packages: [Package] = []) {
        self.name = name
        self.version = version
        self.integrations = integrations
        self.packages = packages
    }

    /// `name/version`, or the name alone.
    public var label: String { version.map { "\(name)/\($0)" } ?? name }
}

/// One context block a client sent beyond those Faultline reads into the device, OS and app (Sentry's
/// `contexts.order`, `contexts.runtime`): its name, its `type` when that says something more, and its values as text
/// (numbers and booleans as written, nested values as their JSON text), in key order.
public struct ReportContext: Sendable, Equatable {
    /// The block's key in `contexts`: its title.
    public var name: String
    /// The context's `type` when it differs from its name (`rust` of type `runtime`).
    public var type: String?
    public var values: [(key: String, value: String)]

    public init(name: String, type: String? = nil, values: [(key: String, value: String)] = []) {
        self.name = name
        self.type = type
        self.values = values
    }

    public static func == (a: ReportContext, b: ReportContext) -> Bool {
        a.name == b.name && a.type == b.type && a.values.map(\.key) == b.values.map(\.key)
            && a.values.map(\.value) == b.values.map(\.value)
    }
}
