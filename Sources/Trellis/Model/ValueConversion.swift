import Foundation

/// Converts loosely typed values (from `init(value:)`, `create`, dynamic subscripts) to a
/// property's type.
enum ValueConversion {
    /// `value` without Optional wrapping, at any depth (nil for `Optional.none` and `NSNull`).
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first.map { unwrapped($0.value) } ?? nil }
        return value
    }

    static func convert<Value: _Persistable>(_ value: Any?, to type: Value.Type) -> Value? {
        if let collectionType = Value.self as? any _CollectionProperty.Type {
            // Collections are always copied, never shared with the source object. Nil (an
            // `Optional<Any>.none` too: `[Any?]` values given as an array) is an empty one.
            guard let value = unwrapped(value) else { return Value._trellisDefaultValue() }
            return convertCollection(collectionType, value) as? Value
        }
        if let exact = value as? Value { return exact }
        if Value.self == AnyRealmValue.self { return AnyRealmValue.converting(value) as? Value }
        if let custom = customType(of: Value.self), let value = unwrapped(value) {
            switch convertCustom(custom, value) {
            case .converted(let converted): return converted as? Value
            case .notAValue: return nil
            case .refused(let persisted):
                // `create` stores it as given, as Realm does (see RefusedPersistedValues).
                if let collector = RefusedPersistedValues.current {
                    collector.noteRefusal()
                    return nil
                }
                // Realm: an optional property takes a value its type's init refuses as nil;
                // any other place traps with Realm's message.
                if Value.self is any OptionalProtocol.Type { return Value._trellisDefaultValue() }
                throwRealmException("Could not convert value '\(persisted)' to type '\(custom)'.")
            }
        }
        // Realm reads an enum property from its raw value too (`"size": 1` for a case of an
        // `Int` enum, `NSNumber` included); a raw value that is no case is invalid.
        if let enumType = persistableEnumType(of: Value.self), let value = unwrapped(value) {
            return convertEnum(enumType, value) as? Value
        }
        let info = Value._trellisTypeInfo
        guard let value = unwrapped(value) else {
            return info.isOptional || info.collection != .none ? Value._trellisDefaultValue() : nil
        }
        // Realm takes any number, or a numeric string, for a Decimal128 property.
        if info.type == .decimal128, info.collection == .none, !(value is Bool), let decimal = decimal128(from: value) {
            return decimal as? Value
        }
        if info.type == .object, info.collection == .none, let objectType = info.objectType,
           value is [String: Any] || value is [Any]
        {
            let object = objectType.init()
            ObjectInitializer.populate(object, from: value)
            return object as? Value
        }
        if info.type == .int, let integer = (value as? any BinaryInteger).map({ Int64($0) }),
           let integerType = integerType(of: Value.self)
        {
            return integerType.init(truncatingIfNeeded: integer) as? Value
        }
        if info.type == .double, let integer = value as? Int { return Double(integer) as? Value }
        if info.type == .float, let number = value as? Double { return Float(number) as? Value }
        return nil
    }
}

extension ValueConversion {
    /// The custom persistable type a property holds (`URL` for `URL` and `URL?`), if any.
    static func customType(of type: Any.Type) -> (any _CustomPersistable.Type)? {
        if let custom = type as? any _CustomPersistable.Type { return custom }
        guard let optional = type as? any OptionalProtocol.Type else { return nil }
        return wrappedType(optional) as? any _CustomPersistable.Type
    }

    private static func wrappedType<O: OptionalProtocol>(_: O.Type) -> Any.Type { O.Wrapped.self }

    /// A number or a numeric string as a `Decimal128` (nil for text that is no number).
    static func decimal128(from value: Any) -> Decimal128? {
        switch value {
        case let decimal as Decimal128: decimal
        case let decimal as Decimal: Decimal128(decimal)
        case let integer as any BinaryInteger: Int64(exactly: integer).map { Decimal128(Decimal($0)) }
        case let number as Double: Decimal128(value: number)
        case let number as Float: Decimal128(value: Double(number))
        case let number as NSNumber: Decimal128(number: number)
        case let text as String: try? Decimal128(string: text)
        default: nil
        }
    }

    /// The sized integer type a property holds (`Int8` for `Int8` and `Int8?`), if any.
    static func integerType(of type: Any.Type) -> (any _PersistableInteger.Type)? {
        if let integer = type as? any _PersistableInteger.Type { return integer }
        guard let optional = type as? any OptionalProtocol.Type else { return nil }
        return wrappedType(optional) as? any _PersistableInteger.Type
    }

    /// The `PersistableEnum` a property holds (`Size` for `Size` and `Size?`), if any.
    static func persistableEnumType(of type: Any.Type) -> (any PersistableEnum.Type)? {
        if let enumType = type as? any PersistableEnum.Type { return enumType }
        guard let optional = type as? any OptionalProtocol.Type else { return nil }
        return wrappedType(optional) as? any PersistableEnum.Type
    }

    /// An enum case from itself or from its raw value.
    private static func convertEnum<E: PersistableEnum>(_: E.Type, _ value: Any) -> Any? {
        if let exact = value as? E { return exact }
        guard let raw = convert(value, to: E.RawValue.self) else { return nil }
        return E(rawValue: raw)
    }

    /// What ``convertCustom(_:_:)`` made of a value.
    private enum CustomConversion {
        /// The custom type's value.
        case converted(Any)
        /// Not a value of the custom type nor of its persisted type.
        case notAValue
        /// A value of the persisted type that the type's failable init refuses.
        case refused(Any)
    }

    /// A custom type's value from itself or from a value of its persisted type.
    private static func convertCustom<P: _CustomPersistable>(_: P.Type, _ value: Any) -> CustomConversion {
        if let exact = value as? P { return .converted(exact) }
        guard let persisted = convert(value, to: P.PersistedType.self) else { return .notAValue }
        guard let made = P._trellisMake(persisted) else { return .refused(persisted) }
        return .converted(made)
    }
}

private func convertCollection<C: _CollectionProperty>(_: C.Type, _ value: Any) -> Any? {
    C._trellisConvert(value)
}

/// Fills an unmanaged object from a dictionary, an array in property order, or another object.
enum ObjectInitializer {
    static func populate(_ object: ObjectBase, from value: Any) {
        let info = ClassInfo.unbound(for: type(of: object))
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        // Inside `create`: values a failable custom type refuses are kept to store as given.
        let collector = RefusedPersistedValues.current
        func set(_ field: FieldInfo, _ newValue: Any?) {
            let stored = if let collector {
                collector.setting(field, of: object, to: newValue) {
                    field.witness.setUnmanaged(at: base + field.offset, newValue)
                }
            } else {
                field.witness.setUnmanaged(at: base + field.offset, newValue)
            }
            if !stored {
                throwRealmException("Invalid value '\(newValue.map { "\($0)" } ?? "nil")' of type "
                    + "'\(newValue.map { "\(type(of: $0))" } ?? "nil")' for '\(field.typeInfo.swiftName)' property "
                    + "'\(info.className).\(field.name)'.")
            }
        }
        switch value {
        case let dictionary as [String: Any]:
            // Realm reads the dictionary by property (RLMInitializeWithValue): keys that name no
            // persisted property are ignored.
            for field in info.storedFields {
                guard let entry = dictionary.index(forKey: field.name) else { continue }
                set(field, dictionary[entry].value)
            }
        case let array as [Any]:
            if array.count > info.storedFields.count {
                throwRealmException("Invalid array input: more values (\(array.count)) than properties "
                    + "(\(info.storedFields.count)).")
            }
            for (field, newValue) in zip(info.storedFields, array) { set(field, newValue) }
        case let source as ObjectBase:
            for field in info.storedFields {
                set(field, source.storedValue(forKey: field.name))
            }
        default:
            throwRealmException("Invalid value '\(value)' to initialize object of type '\(info.className)': expected a "
                + "dictionary, an array or an object.")
        }
    }
}
