import Foundation

/// `min`, `max`, `sum` and `average` of an unmanaged `List`, `MutableSet` or `Map`, computed
/// from its elements as Realm's unmanaged collections do: of the values themselves (`"self"`)
/// or of a property of the objects; min and max of numbers and dates, sum and average of
/// numbers; nil and NaN are skipped; the sum of nothing is zero, the others are nil.
enum UnmanagedAggregate {
    static func compute<Element: _Persistable, T>(_ op: QueryCollectionOperation, _ property: String,
                                                  of elements: [Element]) -> T?
    {
        let allowed: [PropertyType] = op == .min || op == .max ? [.int, .float, .double, .decimal128, .date, .any]
            : [.int, .float, .double, .decimal128, .any]
        let method = "\(op.rawValue.dropFirst())(ofProperty:)"
        let values: [QueryValue]
        if Element._trellisTypeInfo.type == .object, let objectType = Element._trellisTypeInfo.objectType {
            let info = ClassInfo.unbound(for: objectType)
            guard let field = info.field(named: property) else {
                throwRealmException("Invalid property name '\(property)' for class '\(info.className)'.")
            }
            let type = field.typeInfo.type
            guard field.typeInfo.collection == .none, allowed.contains(type), type != .any else {
                throwRealmException("\(method) is not supported for \(type) property '\(info.className).\(property)'")
            }
            values = elements.map { element in
                guard let object = element as? ObjectBase else { return .null }
                return QueryArguments.value(field.witness.dynamicGet(object, field))
            }
        } else {
            let info = Element._trellisTypeInfo
            guard property == "self" else {
                throwRealmException("Invalid property name '\(property)': a collection of values has no properties; "
                    + "use min(), max(), sum() and average().")
            }
            guard allowed.contains(info.type) else {
                throwRealmException("\(method) is not supported for \(info.type)\(info.isOptional ? "?" : "") array")
            }
            values = elements.map { QueryArguments.value($0) }
            if info.type == .any, let element: T = QueryAggregate.extremeElement(op, of: elements, values) {
                return element
            }
            // Realm adds an unmanaged collection's mixed values as decimals; nothing is `.int(0)`.
            if info.type == .any, op == .sum, !elements.isEmpty {
                return convert(QueryAggregate.mixedSum(values), to: T.self)
            }
        }
        var result = QueryAggregate.apply(op, values)
        if op == .sum, result.isNull { result = .int(0) }
        return convert(result, to: T.self)
    }

    /// The aggregate as the caller's type: an average of integers as an `Int` is cut toward
    /// zero; a number becomes a `Decimal128` or a `Float` when asked for one.
    static func convert<T>(_ value: QueryValue, to _: T.Type) -> T? {
        // Unwrapped first: `nil as? T` is a value (`.some(nil)`) when T is an Optional.
        guard let persistable = T.self as? any _Persistable.Type, let converted = open(persistable, value) else {
            return nil
        }
        return converted as? T
    }

    private static func open<P: _Persistable>(_: P.Type, _ value: QueryValue) -> Any? {
        let stored = P._trellisTypeInfo.type
        let swiftValue: Any
        switch (stored, value) {
        case (_, .null): return nil
        case (.int, .double(let d)):
            if d.isNaN { return nil }
            swiftValue = d >= 0x1p63 ? Int.max : d < -0x1p63 ? Int.min : Int(d)
        case (.int, .int(let i)), (.any, .int(let i)): swiftValue = Int(i)
        case (.float, .int(let i)): swiftValue = Float(i)
        case (.float, .double(let d)): swiftValue = Float(d)
        case (.double, .int(let i)): swiftValue = Double(i)
        case (.decimal128, .int(let i)): swiftValue = Decimal128(Decimal(i))
        case (.decimal128, .double(let d)): swiftValue = Decimal128(Decimal(d))
        case (_, .double(let d)): swiftValue = d
        case (_, .decimal(let d)): swiftValue = d
        case (_, .date(let d)): swiftValue = d
        default: return nil
        }
        return ValueConversion.convert(swiftValue, to: P.self)
    }
}
