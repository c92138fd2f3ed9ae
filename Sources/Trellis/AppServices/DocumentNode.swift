/// A JSON value as a caller holds it (TrellisSync's `JSONValue`), read by
/// ``DocumentRowWriter`` without turning it into Foundation objects first.
///
/// Documents are canonical Extended JSON (`{"$numberLong": "5"}`, `{"$oid": …}`); plain JSON
/// numbers are read too (a row written with SQL).
package protocol DocumentNode {
    var isNull: Bool { get }
    /// A JSON `true` or `false`.
    var boolValue: Bool? { get }
    /// A plain JSON integer.
    var int64Value: Int64? { get }
    /// A plain JSON number, integral or not.
    var doubleValue: Double? { get }
    var stringValue: String? { get }
    var arrayValue: [Self]? { get }
    var objectValue: [String: Self]? { get }
    /// The value as ``ExtendedJSON``'s decoder reads it: `String`, `Bool`, `NSNumber`, `NSNull`,
    /// `[Any]` and `[String: Any]` (for what ``DocumentRowWriter`` leaves to that decoder).
    var foundationValue: Any { get }
    /// The text of a one-member wrapper (`{"$oid": "…"}`): the string member `key` of a
    /// document. A node type that reads a member without copying its document out (a lookup
    /// per scalar and per link of a download) gives it here; by default, `objectValue?[key]`.
    func wrapped(_ key: String) -> String?
}

extension DocumentNode {
    /// The member `key` of a document (a wrapper such as `$oid`).
    subscript(member key: String) -> Self? { objectValue?[key] }

    /// The text of a one-member wrapper (`{"$oid": "…"}`).
    package func wrapped(_ key: String) -> String? { self[member: key]?.stringValue }
}
