/// The cost of one scrypt derivation: N = 2^`log2N` rounds, block size `r`, parallelism `p`.
///
/// The default, N = 2^15, r = 8, p = 1, needs 128 · r · N = 32 MiB and about 0.1 s of one core per login: the
/// parameters RFC 7914 and OWASP give for interactive logins. They are stored with each hash, so raising them later
/// leaves older hashes checkable (and a login can then re-hash with the new ones).
public struct ScryptParameters: Sendable, Equatable {
    public var log2N: Int
    public var r: Int
    public var p: Int
    public init(log2N: Int, r: Int, p: Int) {
        self.log2N = log2N
        self.r = r
        self.p = p
    }

    /// What new passwords are hashed with.
    public static let standard = ScryptParameters(log2N: 15, r: 8, p: 1)

    /// Parameters a stored hash may name: anything outside would take too long or too much memory to check (a
    /// hand-edited row must not stall a login for minutes), or too little to mean anything.
    public var isAccepted: Bool { (10...20).contains(log2N) && (1...16).contains(r) && (1...4).contains(p) }
}

/// A stored password: scrypt's output for the password and a random salt, with the parameters it was made with.
///
/// Stored as `scrypt$ln=15,r=8,p=1$<salt hex>$<key hex>` (16 salt bytes, 32 key bytes): one text column that says
/// how to check it. The password itself is never stored and cannot be computed back from this (scrypt is one-way; the
/// salt makes equal passwords hash apart and precomputed tables useless).
public struct PasswordHash: Sendable, Equatable {
    public var parameters: ScryptParameters
    public var salt: [UInt8]
    public var key: [UInt8]

    public init(parameters: ScryptParameters, salt: [UInt8], key: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.key = key
    }

    public static let saltBytes = 16
    public static let keyBytes = 32

    /// The stored form.
    public var encoded: String {
        "scrypt$ln=\(parameters.log2N),r=\(parameters.r),p=\(parameters.p)$\(Hex.encode(salt))$\(Hex.encode(key))"
    }

    /// Reads a stored form; nil when it is not one this version checks (another scheme, parameters out of bounds,
    /// a salt or key of the wrong length).
    public init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "scrypt" else { return nil }
        var values: [String: Int] = [:]
        for pair in parts[1].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Int(kv[1]) else { return nil }
            values[String(kv[0])] = value
        }
        guard values.count == 3, let log2N = values["ln"], let r = values["r"], let p = values["p"] else { return nil }
        let parameters = ScryptParameters(log2N: log2N, r: r, p: p)
        guard parameters.isAccepted, let salt = Hex.bytes(parts[2]), let key = Hex.bytes(parts[3]),
            salt.count == Self.saltBytes, key.count == Self.keyBytes
        else { return nil }
        self.init(parameters: parameters, salt: salt, key: key)
    }

    /// Whether `derived` (scrypt of a presented password under this hash's salt and parameters) is this key,
    /// compared in constant time: every byte is looked at whatever the first difference, so the time of the answer
    /// does not tell how much of a guess was right.
    public func matches(_ derived: [UInt8]) -> Bool {
        ConstantTime.equal(derived, key)
    }
}

/// Comparisons whose time does not depend on where two values differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal; the time depends only on their lengths.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// What a new password must be.
public enum PasswordRule {
    /// Fewest characters (NIST SP 800-63B asks for at least 8; a team's dashboard holds user data).
    public static let minCharacters = 10
    /// Most bytes: scrypt takes any length, but a form should not make the server hash megabytes.
    public static let maxBytes = 1024

    /// Why `password` cannot be used, or nil.
    public static func problem(_ password: String) -> String? {
        if password.count < minCharacters { return "a password has at least \(minCharacters) characters" }
        if password.utf8.count > maxBytes { return "a password has at most \(maxBytes) bytes" }
        return nil
    }
}

/// Derives scrypt keys (swift-crypto's `KDF.Scrypt` in the HTTP module, the one module that links swift-crypto).
public protocol PasswordDeriving: Sendable {
    /// scrypt(`password`, `salt`, N, r, p) of `length` bytes.
    func derive(password: String, salt: [UInt8], parameters: ScryptParameters, length: Int) throws -> [UInt8]
}

extension PasswordHash {
    /// A new hash of `password` with a fresh `salt` (from the caller's random source) under `parameters`.
    public static func make(
        password: String, salt: [UInt8], parameters: ScryptParameters = .standard, deriver: any PasswordDeriving
    ) throws -> PasswordHash {
        PasswordHash(
            parameters: parameters, salt: salt,
            key: try deriver.derive(password: password, salt: salt, parameters: parameters, length: keyBytes))
    }

    /// Whether `password` is the one this hash was made from.
    public func verify(_ password: String, deriver: any PasswordDeriving) throws -> Bool {
        matches(try deriver.derive(password: password, salt: salt, parameters: parameters, length: key.count))
    }
}
