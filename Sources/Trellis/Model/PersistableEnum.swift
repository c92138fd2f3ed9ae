/// An enum stored as its raw value (`Int` or `String`), as in Realm.
///
/// ```swift
/// enum Size: String, PersistableEnum { case small, large }
/// class Dog: Object { @Persisted var size: Size }   // defaults to the first case
/// ```
///
/// As in Realm (where it refines `RealmEnum`, a `RealmOptionalType`), it also parameterizes the
/// legacy declarations: `let size = RealmProperty<Size?>()`, `let size = RealmOptional<Size>()`.
///
/// Enums are collection values too (`List<Size>`, `MutableSet<Size?>`, `Map<String, Size>`),
/// ordered by their raw values: `min()`, `max()` and `sorted(ascending:)` of a collection of
/// them compare raw values, as in Realm.
public protocol PersistableEnum: _PersistableInsideOptional, RawRepresentable, CaseIterable, _PrimaryKey, _Indexable,
    RealmOptionalType, _OptionalRealmPropertyType, RealmCollectionValue, MinMaxType, SortableType, Comparable
where RawValue: _PersistableInsideOptional & Comparable {}

extension PersistableEnum {
    /// The database stores an enum as its raw value (as in Realm): generic code constrained on
    /// the persisted type (`where T.PersistedType: _QueryNumeric`, `SortableType`) takes it.
    public typealias PersistedType = RawValue

    /// Orders cases by their raw values, as the database does.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = RawValue._trellisTypeInfo
        info.swiftName = "\(Self.self)"
        return info
    }

    /// The first case.
    public static func _trellisDefaultValue() -> Self {
        guard let first = allCases.first else {
            throwRealmException("PersistableEnum '\(Self.self)' has no cases.")
        }
        return first
    }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        let raw = RawValue._trellisRead(row, column)
        guard let value = Self(rawValue: raw) else {
            throwRealmException("The stored value '\(raw)' is not a case of '\(Self.self)'.")
        }
        return value
    }

    public static func _trellisEncode(_ value: Self, _ context: _EncodingContext) -> _StoredValue {
        RawValue._trellisEncode(value.rawValue, context)
    }
}
