import CLibdw

#if canImport(Glibc)
import Glibc
#endif

/// Turns mangled linkage names into readable ones: Swift (`$s…`, `_T0…`) with the Swift runtime's own
/// demangler, C++ (`_Z…`) with the Itanium demangler of libstdc++. Anything else is returned unchanged.
///
/// Names come from uploaded files, so they are hostile: names longer than `maxLength` bytes are not
/// demangled (the demanglers recurse on nesting, and no real name comes close).
public enum Demangler {
    /// The longest name handed to a demangler, in UTF-8 bytes.
    public static let maxLength = 16 << 10

    public static func demangle(_ name: String) -> String {
        guard name.utf8.count <= maxLength else { return name }
        if name.hasPrefix("$s") || name.hasPrefix("_$s") || name.hasPrefix("$S") || name.hasPrefix("_T0")
            || name.hasPrefix("$e")
        {
            return name.withCString { cName -> String? in
                guard let out = swift_demangle(cName, strlen(cName), nil, nil, 0) else { return nil }
                defer { free(out) }
                return String(cString: out)
            } ?? name
        }
        if name.hasPrefix("_Z") {
            return name.withCString { cName -> String? in
                var status: Int32 = -1
                guard let out = __cxa_demangle(cName, nil, nil, &status) else { return nil }
                defer { free(out) }
                return status == 0 ? String(cString: out) : nil
            } ?? name
        }
        return name
    }
}
