import Foundation

/// A value on its way into a row, produced by a property type's encoder.
///
/// Public only so that the `_Persistable` requirements can name it; its contents are internal.
public struct _StoredValue {
    enum Payload {
        case null
        case int(Int64)
        case bool(Bool)
        case float(Float)
        case double(Double)
        case date(Date)
        case string(String)
        case data(Data)
        case objectId(ObjectId)
        case decimal(Decimal128)
        case uuid(UUID)
        /// A link to an object of the column's target class (already in the Realm).
        case link(ObjectKey)
        /// An `AnyRealmValue`: a type tag and the encoded payload.
        case mixed(MixedValue)
        /// Collections and LinkingObjects keep nothing in the row.
        case none
    }
    let payload: Payload
    init(_ payload: Payload) { self.payload = payload }
}

/// The stored form of an `AnyRealmValue` that is not nil.
enum MixedValue {
    case int(Int64), bool(Bool), float(Float), double(Double), date(Date), string(String), data(Data)
    case objectId(ObjectId), decimal(Decimal128), uuid(UUID)
    case link(tableId: UInt32, key: ObjectKey)
    /// A nested list (`AnyRealmValue.list`): its elements, nil for `.none`.
    case list([MixedValue?])
    /// A nested dictionary (`AnyRealmValue.dictionary`): its entries in key order (UTF-8 bytes).
    case dictionary([(key: String, value: MixedValue?)])

    /// Whether this is a nested list or dictionary.
    var isCollection: Bool {
        switch self {
        case .list, .dictionary: true
        default: false
        }
    }
}
