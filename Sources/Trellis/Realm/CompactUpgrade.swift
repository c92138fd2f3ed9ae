/// Brings a file of format 3-5 to format 6: rows with the slot width of their values
/// (``RowFormat``) and primary-key entries whose value, the object key, has only its significant
/// bytes (``PrimaryKeyEncoding/valueByteCount(_:)``).
///
/// Runs when a writable Realm opens the file, in one write transaction: every row of every class
/// is written again with the smallest slot width that holds its values (the same columns, null
/// bits, values and tail bytes, so the column copies, indexes and backlinks stay as they are),
/// every primary-key entry with its short value, and the catalog records format 6; or, if
/// anything fails, nothing changes. Trellis versions that read format 5 refuse format 6, so none
/// reads a compact row as 8-byte slots. A read-only open leaves the file as it is: this version
/// reads both layouts. (A file of format 2 is compacted by ``ColumnUpgrade``, in the same
/// transaction as its column copies.)
enum CompactUpgrade {
    static func upgradeIfNeeded(_ configuration: Realm.Configuration, file: FileState) throws {
        try FileUpgrade.run(configuration, file: file, needsUpgrade: needsUpgrade) { catalog, txn in
            let (rows, keys) = try compact(catalog, in: txn)
            catalog.format = SchemaCatalog.formatVersion
            return "\(rows) rows and \(keys) primary-key entries written compactly"
        }
    }

    /// Whether `catalog`'s file has column copies but may hold the layout before format 6.
    private static func needsUpgrade(_ catalog: SchemaCatalog) -> Bool {
        catalog.format >= 3 && catalog.format < SchemaCatalog.compactLayoutFormat
    }

    /// Writes every row and primary-key entry of `catalog`'s classes again in format 6's layout
    /// (one that has it already is left alone); returns how many of each were written.
    @discardableResult
    static func compact(_ catalog: SchemaCatalog, in txn: Transaction) throws -> (rows: Int, keys: Int) {
        var rows = 0, keys = 0
        for stored in catalog.classes {
            rows += try compactRows(of: stored, in: txn)
            keys += try compactPrimaryKeys(of: stored, in: txn)
        }
        return (rows, keys)
    }

    private static func compactRows(of stored: SchemaCatalog.StoredClass, in txn: Transaction) throws -> Int {
        guard let rows = Table.existingRows(of: stored.name, in: txn), let cursor = txn.existingCursor(rows)
        else { return 0 }
        let variable = ColumnKind.of(stored).map { $0 == .variable }
        var keys = [UInt64]()
        var entry = cursor.first()
        while let (rawKey, _) = entry {
            keys.append(Cursor.integerKey(rawKey))
            entry = cursor.next()
        }
        if let failure = cursor.failure { throw failure }
        var rewritten = 0
        for key in keys {
            guard let bytes = txn.get(rows, integerKey: key),
                  let compact = RowWriter.compacted(RowView(bytes: bytes),
                                                    isVariableWidth: { $0 < variable.count && variable[$0] })
            else { continue }
            try compact.withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
            rewritten += 1
        }
        return rewritten
    }

    private static func compactPrimaryKeys(of stored: SchemaCatalog.StoredClass, in txn: Transaction) throws -> Int {
        guard let index = try txn.database(named: Table.primaryKeysName(stored.name), create: false),
              let cursor = txn.existingCursor(index)
        else { return 0 }
        var entries = [(key: [UInt8], objectKey: ObjectKey)]()
        var entry = cursor.first()
        while let (key, value) = entry {
            let objectKey = PrimaryKeyEncoding.objectKey(value)
            if value.count == 8, PrimaryKeyEncoding.valueByteCount(objectKey) < 8 {
                entries.append((Array(key), objectKey))
            }
            entry = cursor.next()
        }
        if let failure = cursor.failure { throw failure }
        for (key, objectKey) in entries {
            var value = objectKey.littleEndian
            let length = PrimaryKeyEncoding.valueByteCount(objectKey)
            _ = try key.withUnsafeBytes { k in
                try withUnsafeBytes(of: &value) { v in
                    try txn.put(index, key: k, value: UnsafeRawBufferPointer(rebasing: v.prefix(length)))
                }
            }
        }
        return entries.count
    }
}
