import Foundation

// Realm's legacy value properties encode and decode as their value alone (`[1, null]`, not
// `[{"value": 1}]`), so that a Codable model class declared with them reads the same JSON as
// one declared with `@Persisted`.

extension RealmOptional: Codable where Wrapped: Codable {
    /// Decodes the value; `null` is nil.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.singleValueContainer()
        value = container.decodeNil() ? nil : try container.decode(Wrapped.self)
    }

    /// Encodes the value (`null` for nil).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension RealmProperty: Codable where Value: Codable {
    /// Decodes the value (`RealmProperty<Int?>` reads `null` as nil).
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        value = try decoder.singleValueContainer().decode(Value.self)
    }

    /// Encodes the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
