import Foundation

/// The index of one `@Persisted(indexed: true)` property: a database `ix.<Class>.<property>`
/// whose keys are the encoded value followed by the object key (big-endian), with empty
/// values. Equal values are contiguous and ordered by value, so equality is a prefix scan and
/// a range on integers or dates is one seek plus a walk.
struct SecondaryIndex {
    let field: FieldInfo
    let database: DatabaseHandle

    static func name(_ className: String, _ property: String) -> String { "ix.\(className).\(property)" }

    /// Whether a property of this type is indexed (Realm indexes these types).
    /// `indexed`: whether the property is indexed, when not as the model declares it.
    static func supports(_ field: FieldInfo, indexed: Bool? = nil) -> Bool {
        (indexed ?? field.isIndexed) && !field.isPrimaryKey && field.typeInfo.collection == .none
            && [.int, .bool, .string, .objectId, .UUID, .date].contains(field.typeInfo.type)
    }

    /// The object key at the end of an index entry's key.
    static func objectKey(of entry: UnsafeRawBufferPointer) -> ObjectKey {
        BigEndian.read(UnsafeRawBufferPointer(rebasing: entry.suffix(8)), at: 0)
    }

    func entryKey(_ value: _StoredValue.Payload, _ key: ObjectKey) -> [UInt8] {
        var out = IndexKeyEncoding.encode(value)
        BigEndian.append(key, to: &out)
        return out
    }
}

/// Order-preserving value encodings shared by the primary-key and secondary indexes.
enum IndexKeyEncoding {
    static func encode(_ value: _StoredValue.Payload) -> [UInt8] {
        if case .date(let date) = value {
            // IEEE 754 bits, made to sort as unsigned: flip all bits of negatives, the sign of positives.
            let bits = date.timeIntervalSinceReferenceDate.bitPattern
            let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
            var out: [UInt8] = [1]
            BigEndian.append(ordered, to: &out)
            return out
        }
        return PrimaryKeyEncoding.encode(value)
    }

    /// The payload of a query value for an index of `type`, or nil when it cannot be indexed
    /// (the query then scans).
    static func payload(_ value: QueryValue, for type: PropertyType) -> _StoredValue.Payload? {
        switch (type, value) {
        case (_, .null): .null
        case (.int, .int(let i)): .int(i)
        case (.bool, .bool(let b)): .bool(b)
        case (.string, .string(let s)): .string(s)
        case (.objectId, .objectId(let o)): .objectId(o)
        case (.UUID, .uuid(let u)): .uuid(u)
        case (.date, .date(let d)): .date(d)
        default: nil
        }
    }
}

extension RealmCore {
    /// Brings the secondary indexes of a row up to date (`old`: the row before, nil if new;
    /// `new`: the values written, nil when the row is deleted).
    func updateIndexes(_ table: Table, key: ObjectKey, old: RowView?, new: [_StoredValue.Payload]?) {
        guard !table.indexes.isEmpty, let txn = writeTransaction else { return }
        // Read every old value first: LMDB's pointers into `old` end with the first write.
        let befores = table.indexes.map { index in old.map { storedPayload($0, index.field) } }
        for (index, before) in zip(table.indexes, befores) {
            let after = new.map { $0[index.field.rowColumn] }
            if let before, let after, IndexKeyEncoding.encode(before) == IndexKeyEncoding.encode(after) { continue }
            do {
                if let before {
                    try index.entryKey(before, key).withUnsafeBytes { _ = try txn.delete(index.database, key: $0) }
                }
                if let after {
                    try index.entryKey(after, key).withUnsafeBytes { k in
                        _ = try [UInt8]().withUnsafeBytes { try txn.put(index.database, key: k, value: $0) }
                    }
                }
            } catch {
                throwRealmException("Trellis could not update the index of '\(table.info.className)."
                    + "\(index.field.name)' in '\(environmentPath)': \(error)")
            }
        }
    }

    /// The keys of the objects whose indexed value equals `value`.
    func indexedKeys(_ index: SecondaryIndex, equalTo value: _StoredValue.Payload) -> [ObjectKey] {
        guard let cursor = transaction.existingCursor(index.database) else { return [] }
        let wanted = IndexKeyEncoding.encode(value)
        var keys = [ObjectKey]()
        var entry = wanted.withUnsafeBytes { cursor.seek(atLeast: $0) }
        // Longer values sharing the prefix (a string with more characters) may sort among the
        // equal ones: walk the whole prefix, keep the exact ones.
        while let (raw, _) = entry, raw.count >= 8, raw.starts(with: wanted) {
            if raw.count - 8 == wanted.count { keys.append(SecondaryIndex.objectKey(of: raw)) }
            entry = cursor.next()
        }
        return keys
    }

    /// The keys of the objects whose indexed value lies in `[lower, upper]` (either bound may
    /// be absent; nil values are never included).
    func indexedKeys(_ index: SecondaryIndex, from lower: _StoredValue.Payload?, to upper: _StoredValue.Payload?)
        -> [ObjectKey]
    {
        orderedRange(index.database, lower, upper) { raw, _ in
            raw.count >= 8 ? (UnsafeRawBufferPointer(rebasing: raw.prefix(raw.count - 8)), SecondaryIndex.objectKey(of: raw)) : nil
        }
    }

    /// The keys of a primary-key range (integer primary keys sort numerically).
    func primaryKeyRange(_ table: Table, lower: _StoredValue.Payload?, upper: _StoredValue.Payload?) -> [ObjectKey] {
        guard let database = table.primaryKeys else { return [] }
        return orderedRange(database, lower, upper) { raw, value in (raw, PrimaryKeyEncoding.objectKey(value)) }
    }

    /// Walks an index whose keys sort by encoded value from `lower` to `upper` (inclusive);
    /// `split` gives an entry's encoded value and object key.
    private func orderedRange(
        _ database: DatabaseHandle, _ lower: _StoredValue.Payload?, _ upper: _StoredValue.Payload?,
        _ split: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> (value: UnsafeRawBufferPointer, key: ObjectKey)?
    ) -> [ObjectKey] {
        guard let cursor = transaction.existingCursor(database) else { return [] }
        let low = lower.map(IndexKeyEncoding.encode) ?? [1]  // tag 1: after every nil (tag 0)
        let high = upper.map(IndexKeyEncoding.encode)
        var keys = [ObjectKey]()
        var entry = low.withUnsafeBytes { cursor.seek(atLeast: $0) }
        while let (raw, stored) = entry, let (value, key) = split(raw, stored) {
            if let high, !value.lexicographicallyPrecedes(high), !value.elementsEqual(high) { break }
            keys.append(key)
            entry = cursor.next()
        }
        return keys
    }
}
