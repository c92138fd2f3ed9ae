/// The plain scalar types that ``DocumentRowReader`` reads and ``DocumentRowWriter`` writes
/// column by column. A custom or enum type is not one of them: it goes through its property's
/// wrapper, which maps between the stored value and the app's type (and checks the value).
enum DocumentScalarKind {
    /// An integer, with the range of the Swift width the property declares (`Int8` … `Int64`):
    /// a document's value outside it is refused.
    case int(ClosedRange<Int64>)
    case bool, double, float, string, objectId, date, decimal, data, uuid

    /// The kind of a property of this type, or nil when it is not a plain scalar (a collection,
    /// a link, `AnyRealmValue`, a custom or enum type).
    init?(_ type: _PropertyTypeInfo) {
        let name = type.swiftName.hasSuffix("?") ? String(type.swiftName.dropLast()) : type.swiftName
        switch (type.type, name) {
        case (.int, "Int"), (.int, "Int64"): self = .int(Int64.min...Int64.max)
        case (.int, "Int32"): self = .int(Int64(Int32.min)...Int64(Int32.max))
        case (.int, "Int16"): self = .int(Int64(Int16.min)...Int64(Int16.max))
        case (.int, "Int8"): self = .int(Int64(Int8.min)...Int64(Int8.max))
        case (.bool, "Bool"): self = .bool
        case (.double, "Double"): self = .double
        case (.float, "Float"): self = .float
        case (.string, "String"): self = .string
        case (.objectId, "ObjectId"): self = .objectId
        case (.date, "Date"): self = .date
        case (.decimal128, "Decimal128"): self = .decimal
        case (.data, "Data"): self = .data
        case (.UUID, "UUID"): self = .uuid
        default: return nil
        }
    }
}
