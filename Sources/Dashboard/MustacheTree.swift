/// Turns a view model into plain dictionaries and arrays before rendering.
///
/// swift-mustache looks names up with `Mirror` at every level of the context stack, for every tag: on a
/// 5,000-issue site that reflection was 70 % of render time (perf). Reflecting each value once, up front, into
/// `[String: Any]` (which Mustache reads by key) renders the same output several times faster.
enum MustacheTree {
    static func convert(_ value: Any) -> Any {
        convertOptional(value) ?? ([String: Any]() as Any)
    }

    /// The converted value; nil for an empty optional (a missing key is falsy in Mustache, as nil was).
    /// `fieldsFirst: false` reflects every struct, also those that name their own fields (for the tests that
    /// compare the two).
    static func convertOptional(_ value: Any, fieldsFirst: Bool = true) -> Any? {
        // The leaves of every view model, and the rows that name their fields, without building a Mirror for each.
        switch value {
        case let text as String: return text
        case let number as Int: return number
        case let flag as Bool: return flag
        case let view as any MustacheFields where fieldsFirst:
            let named = view.mustacheFields
            var fields: [String: Any] = [:]
            fields.reserveCapacity(named.count)
            for (name, field) in named {
                if let converted = convertOptional(field) { fields[name] = converted }
            }
            return fields
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional?:
            guard let wrapped = mirror.children.first?.value else { return nil }
            return convertOptional(wrapped, fieldsFirst: fieldsFirst)
        case .struct?, .class?:
            var fields: [String: Any] = [:]
            fields.reserveCapacity(Int(mirror.children.count))
            for child in mirror.children {
                guard let label = child.label, let converted = convertOptional(child.value, fieldsFirst: fieldsFirst)
                else { continue }
                fields[label] = converted
            }
            return fields
        case .collection?, .set?:
            return mirror.children.compactMap { convertOptional($0.value, fieldsFirst: fieldsFirst) }
        case .dictionary?:
            guard let dictionary = value as? [String: Any] else { return value }
            return dictionary.compactMapValues { convertOptional($0, fieldsFirst: fieldsFirst) }
        default:
            // Other numbers, enums: rendered as they are.
            return value
        }
    }
}
