import Synchronization

/// One class's storage inside one file: its rows and its primary-key index.
///
/// Rows live in an integer-keyed database named `t.<Class>` (object key → row); a class with a
/// primary key also has `pk.<Class>` (encoded key value → object key); the column copy of the
/// rows is `c.<Class>` (see ``ColumnStorage``; absent in files of format 2 opened read-only).
final class Table: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init but the atomic
    // `accessorSetupState`; the handles are plain integers valid for the environment's lifetime.
    let info: ClassInfo
    let rows: DatabaseHandle
    let primaryKeys: DatabaseHandle?
    /// A stable number for this class in this file (used in backlink keys).
    let tableId: UInt32
    /// The indexes of `indexed: true` properties.
    let indexes: [SecondaryIndex]
    /// The column copy of the rows, if the file keeps one.
    let columns: ColumnStorage?
    /// The handle of the column copy's database, -1 without one (read on every row written).
    let columnDatabase: Int
    /// The to-one link fields, whose targets keep backlinks (looked at on every row written).
    let toOneLinks: [FieldInfo]
    /// Whether the class has fields declared without `@Persisted`, which a new accessor binds.
    private let hasLegacyFields: Bool
    /// What a new accessor needs, once decided: 0 not yet; 1 nothing; 2 its legacy fields
    /// bound; 3 its properties marked managed (an `Encodable` class), and legacy fields if any.
    private let accessorSetupState = Atomic<UInt8>(0)

    /// Whether the class is `Encodable`: its accessors mark their properties managed, so that
    /// encoding one fails as in Realm instead of encoding stale values. Decided when the first
    /// accessor is made, not when the table opens: the conformance lookup of a class met for the
    /// first time scans every conformance record of the process (~0.3M instructions), which
    /// every launch paid for each class of the schema.
    var isEncodable: Bool { accessorSetup == 3 }

    /// Whether a new accessor may need more than its core and key: legacy fields, `Encodable`,
    /// or not decided yet (``isEncodable`` decides when the setup asks). One load, as the
    /// stored flag it replaces.
    var needsAccessorSetup: Bool { accessorSetupState.load(ordering: .relaxed) != 1 }

    /// ``accessorSetupState``, decided on first use (then one load).
    private var accessorSetup: UInt8 {
        let state = accessorSetupState.load(ordering: .relaxed)
        return state != 0 ? state : decideAccessorSetup()
    }

    @inline(never)
    private func decideAccessorSetup() -> UInt8 {
        let state: UInt8 = info.objectType is any Encodable.Type ? 3 : hasLegacyFields ? 2 : 1
        accessorSetupState.store(state, ordering: .relaxed)
        return state
    }

    init(info: ClassInfo, tableId: UInt32, rows: DatabaseHandle, primaryKeys: DatabaseHandle?,
         indexes: [SecondaryIndex] = [], columns: ColumnStorage? = nil)
    {
        self.info = info
        self.tableId = tableId
        self.rows = rows
        self.primaryKeys = primaryKeys
        self.indexes = indexes
        self.columns = columns
        self.columnDatabase = columns.map { Int($0.database) } ?? -1
        self.toOneLinks = info.storedFields.filter { $0.isLink && $0.typeInfo.collection == .none }
        self.hasLegacyFields = !info.legacyFields.isEmpty
    }

    /// Every database of the table.
    var databases: [DatabaseHandle] {
        [rows] + (primaryKeys.map { [$0] } ?? []) + indexes.map(\.database) + (columns.map { [$0.database] } ?? [])
            + (columns?.delta.map { [$0] } ?? [])
    }

    /// Whether `other` reads and writes the same LMDB databases.
    func hasSameDatabases(as other: Table) -> Bool {
        rows == other.rows && primaryKeys == other.primaryKeys
            && indexes.map(\.database) == other.indexes.map(\.database)
            && columns?.database == other.columns?.database && columns?.delta == other.columns?.delta
    }

    /// The index of `field`, if it has one.
    func index(of field: FieldInfo) -> SecondaryIndex? {
        indexes.first { $0.field === field }
    }

    /// The fields of `info` a table keeps an index of: the model's indexed ones, or those named
    /// by `indexedColumns` (column names), of the types Trellis indexes.
    static func indexedFields(_ info: ClassInfo, indexedColumns: Set<String>?) -> [FieldInfo] {
        info.storedFields.filter { field in
            SecondaryIndex.supports(field, indexed: indexedColumns.map { $0.contains(field.columnName) } ?? field.isIndexed)
        }
    }

    /// Whether the table keeps exactly the indexes `indexedColumns` names (see ``indexedFields(_:indexedColumns:)``).
    func keepsIndexes(_ indexedColumns: Set<String>) -> Bool {
        indexes.map(\.field.columnName) == Self.indexedFields(info, indexedColumns: indexedColumns).map(\.columnName)
    }

    static func rowsName(_ className: String) -> String { "t.\(className)" }

    /// The rows database of a stored class, if it has one (none until an object was stored).
    static func existingRows(of className: String, in txn: Transaction) -> DatabaseHandle? {
        (try? txn.database(named: rowsName(className), create: false, integerKeys: true)) ?? nil
    }
    static func primaryKeysName(_ className: String) -> String { "pk.\(className)" }

    /// Opens (or, in a write transaction, creates) the databases of a class. `columnShift` is the
    /// catalog's (nil: the file keeps no column copies).
    ///
    /// `indexedColumns`: the column names whose index the table keeps, when not the model's (the
    /// catalog's flags: a Realm bound to a file whose indexes differ from its model's).
    static func open(_ info: ClassInfo, tableId: UInt32, in txn: Transaction, create: Bool, columnShift: Int?,
                     indexedColumns: Set<String>? = nil) throws -> Table?
    {
        guard let rows = try txn.database(named: rowsName(info.className), create: create, integerKeys: true) else {
            return nil
        }
        var primaryKeys: DatabaseHandle?
        if info.primaryKeyField != nil {
            primaryKeys = try txn.database(named: primaryKeysName(info.className), create: create)
        }
        var indexes = [SecondaryIndex]()
        for field in indexedFields(info, indexedColumns: indexedColumns) {
            // A file written before the index existed has none: queries on it then scan.
            if let database = try txn.database(named: SecondaryIndex.name(info.className, field.columnName), create: create) {
                indexes.append(SecondaryIndex(field: field, database: database))
            }
        }
        var columns: ColumnStorage?
        if let columnShift,
           let database = try txn.database(named: ColumnStorage.name(info.className), create: create, integerKeys: true)
        {
            let delta = try txn.database(named: ColumnDelta.name(info.className), create: create, integerKeys: true)
            columns = ColumnStorage(database: database, delta: delta, rows: rows, shift: columnShift,
                                    kinds: ColumnKind.of(info))
        }
        return Table(info: info, tableId: tableId, rows: rows, primaryKeys: primaryKeys, indexes: indexes,
                     columns: columns)
    }
}

/// Encodes primary-key values as index keys: a tag byte (0 = nil, 1 = value), then the value's
/// bytes (integers big-endian with the sign flipped, so the index sorts numerically). An entry's
/// value is the object key, in its significant bytes (``valueByteCount(_:)``).
enum PrimaryKeyEncoding {
    static func encode(_ value: _StoredValue.Payload) -> [UInt8] {
        switch value {
        case .null: return [0]
        case .int(let i):
            var bytes: [UInt8] = [1]
            bytes.reserveCapacity(9)
            BigEndian.append(UInt64(bitPattern: i) ^ (1 << 63), to: &bytes)
            return bytes
        case .string(let s): return [1] + Array(s.utf8)
        case .objectId(let o): return [1] + o.byteArray
        case .uuid(let u): return [1] + withUnsafeBytes(of: u.uuid) { Array($0) }
        case .bool(let b): return [1, b ? 1 : 0]
        default: return [2]
        }
    }

    /// Calls `body` with the encoded value; integers (the common key) are encoded on the stack.
    static func withEncoded<R>(_ value: _StoredValue.Payload, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows
        -> R
    {
        guard case .int(let integer) = value else { return try encode(value).withUnsafeBytes(body) }
        return try withEncoded(integer: integer, body)
    }

    /// Calls `body` with an integer key value encoded on the stack.
    @inline(__always)
    static func withEncoded<R>(integer: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: 9, alignment: 8) { buffer in
            buffer[0] = 1
            BigEndian.store(UInt64(bitPattern: integer) ^ (1 << 63), into: buffer, at: 1)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The stored form of a primary-key value whose type is exactly the key property's, for
    /// the common key types (`Int`, `Int64`, `String`: ``FieldInfo/directKeyType``), read
    /// straight from its type: no reflection, no conversion. Nil otherwise (optionals,
    /// conversions, wrong types and their messages take the general path).
    static func payload<Key>(ofKey key: Key, for field: FieldInfo) -> _StoredValue.Payload? {
        guard let direct = field.directKeyType, direct == Key.self else { return nil }
        if Key.self == Int.self { return .int(Int64(unsafeBitCast(key, to: Int.self))) }
        if Key.self == Int64.self { return .int(unsafeBitCast(key, to: Int64.self)) }
        if Key.self == String.self {
            return withUnsafePointer(to: key) { pointer in
                pointer.withMemoryRebound(to: String.self, capacity: 1) { .string($0.pointee) }
            }
        }
        return nil
    }

    /// How many bytes an entry's value, the object key, takes: its significant bytes,
    /// little-endian, at least one (file format 6; earlier files hold all 8, read the same way).
    static func valueByteCount(_ key: ObjectKey) -> Int { max(1, (64 &- key.leadingZeroBitCount &+ 7) &>> 3) }

    /// The object key an entry's value holds (1-8 little-endian bytes; 0 for a value of another
    /// length, which only a damaged file holds and the consistency check reports).
    @inline(__always)
    static func objectKey(_ value: UnsafeRawBufferPointer) -> ObjectKey {
        if value.count == 8 { return value.loadUnaligned(as: UInt64.self) }
        guard value.count > 0, value.count < 8 else { return 0 }
        var key: ObjectKey = 0
        for index in 0..<value.count { key |= UInt64(value[index]) &<< UInt64(8 &* index) }
        return key
    }

    /// A readable form of a key value for error messages.
    static func describe(_ value: _StoredValue.Payload) -> String {
        switch value {
        case .null: "null"
        case .int(let i): "\(i)"
        case .string(let s): s
        case .objectId(let o): o.stringValue
        case .uuid(let u): u.uuidString
        case .bool(let b): "\(b)"
        default: "?"
        }
    }
}
