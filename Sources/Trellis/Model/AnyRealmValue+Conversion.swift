import Foundation

extension AnyRealmValue {
    /// The value a loosely typed input stands for (`init(value:)`, `create`, dynamic setters):
    /// an `AnyRealmValue`, a supported scalar, an object, or a Swift array or dictionary of
    /// these (nested to any depth), which become a nested list or dictionary. Nil when the input
    /// has no `AnyRealmValue` form.
    static func converting(_ input: Any?) -> AnyRealmValue? {
        guard let input = ValueConversion.unwrapped(input) else { return AnyRealmValue.none }
        switch input {
        case let value as AnyRealmValue: return value
        case let value as Int: return .int(value)
        case let value as any BinaryInteger & FixedWidthInteger: return Int(exactly: value).map { .int($0) }
        case let value as Bool: return .bool(value)
        case let value as Float: return .float(value)
        case let value as Double: return .double(value)
        case let value as String: return .string(value)
        case let value as Data: return .data(value)
        case let value as Date: return .date(value)
        case let value as ObjectId: return .objectId(value)
        case let value as Decimal128: return .decimal128(value)
        case let value as UUID: return .uuid(value)
        case let value as Object: return .object(value)
        case let value as List<AnyRealmValue>: return .list(value)
        case let value as Map<String, AnyRealmValue>: return .dictionary(value)
        case let array as [Any]:
            var elements = [AnyRealmValue]()
            for item in array {
                guard let element = converting(item) else { return nil }
                elements.append(element)
            }
            return .fromArray(elements)
        case let dictionary as [String: Any]:
            var entries = [String: AnyRealmValue]()
            for (key, item) in dictionary {
                guard let element = converting(item) else { return nil }
                entries[key] = element
            }
            return .fromDictionary(entries)
        default:
            return nil
        }
    }
}
