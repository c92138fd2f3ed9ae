/// What commits changed: per table, the objects inserted, deleted and modified (with the
/// columns that changed). Notifications are computed from this, never by comparing whole
/// snapshots.
///
/// A column is a stored column's index (`>= 0`) or a backlink column (`< 0`, see
/// ``ChangeSet/backlinkColumn(originTable:originColumn:)``): a target object counts as modified
/// in a backlink column when a link to it from that origin column was added or removed.
struct ChangeSet: Equatable {
    struct TableChanges: Equatable {
        var insertions = Set<ObjectKey>()
        var deletions = Set<ObjectKey>()
        var modifications = [ObjectKey: Set<Int>]()

        var isEmpty: Bool { insertions.isEmpty && deletions.isEmpty && modifications.isEmpty }
    }

    var tables = [UInt32: TableChanges]()
    /// True when some commit's record was missing (written before change records existed, or
    /// trimmed): every object may have changed.
    var isComplete = true
    /// True when the changes are the observing Realm's own commit, delivered right after it.
    /// Realm then supplies no old property values ("not supplied if the change happened on the
    /// same thread as the notification"): see ``PropertyChange/oldValue``.
    var isOwnCommit = false

    var isEmpty: Bool { isComplete && tables.values.allSatisfy(\.isEmpty) }

    static func backlinkColumn(originTable: UInt32, originColumn: Int) -> Int {
        -1 - (Int(originTable) << 16 | originColumn)
    }

    /// Appends a later commit's changes.
    mutating func append(_ later: ChangeSet) {
        isComplete = isComplete && later.isComplete
        for (tableId, next) in later.tables {
            var current = tables[tableId] ?? TableChanges()
            for key in next.deletions {
                if current.insertions.remove(key) == nil { current.deletions.insert(key) }
                current.modifications[key] = nil
            }
            for key in next.insertions { current.insertions.insert(key) }
            for (key, columns) in next.modifications where !current.insertions.contains(key) {
                current.modifications[key, default: []].formUnion(columns)
            }
            tables[tableId] = current
        }
    }
}

/// Records the changes of one write transaction as they are made: cheap for the bulk insert
/// (keys a transaction allocates grow, so its new objects are ranges and are never looked up).
struct ChangeRecorder {
    struct TableRecord {
        /// The first key this transaction allocated in the table: keys at or above it are new.
        var firstNewKey = ObjectKey.max
        var insertedRanges = [ClosedRange<ObjectKey>]()
        /// New objects deleted again in the same transaction.
        var deletedNew = Set<ObjectKey>()
        var deletions = Set<ObjectKey>()
        var modifications = [ObjectKey: Set<Int>]()
    }

    private(set) var records = TableIdMap<TableRecord>()

    var isEmpty: Bool { records.isEmpty }

    mutating func reset() { records.removeAll() }

    mutating func inserted(_ tableId: UInt32, _ key: ObjectKey) {
        records.update(tableId, default: TableRecord()) { $0?.insert(key) }
    }

    mutating func deleted(_ tableId: UInt32, _ key: ObjectKey) {
        records.update(tableId, default: TableRecord()) { $0?.delete(key) }
    }

    mutating func modified(_ tableId: UInt32, _ key: ObjectKey, column: Int) {
        if let record = records[tableId], key >= record.firstNewKey { return }
        records.update(tableId, default: TableRecord()) { _ = $0?.modifications[key, default: []].insert(column) }
    }
}

extension ChangeRecorder.TableRecord {
    mutating func insert(_ key: ObjectKey) {
        if key < firstNewKey { firstNewKey = key }
        if let last = insertedRanges.last, last.upperBound &+ 1 == key {
            insertedRanges[insertedRanges.count - 1] = last.lowerBound...key
        } else {
            insertedRanges.append(key...key)
        }
    }

    mutating func delete(_ key: ObjectKey) {
        modifications[key] = nil
        if key >= firstNewKey { deletedNew.insert(key) } else { deletions.insert(key) }
    }
}

// MARK: - Stored form

/// A commit's change record as stored in the file (the `changes` database, keyed by the
/// commit's version), so that every process can compute notifications for every commit.
///
/// Layout, little-endian: per table `tableId u32, rangeCount u32, (low u64, high u64)*,
/// deletionCount u32, key u64*, modificationCount u32, (key u64, columnCount u16, column i32*)*`.
enum ChangeRecordEncoding {
    /// Calls `body` with the stored form of `recorder`'s changes (valid only during the call).
    static func withEncoded<R>(_ recorder: ChangeRecorder, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let tables = recorder.records
        var count = 0
        tables.forEachSorted { _, record in count += encodedSize(of: record) }
        return try LittleEndianWriter.withBytes(count: count, { writer in
            tables.forEachSorted { tableId, record in encode(tableId, record, into: &writer) }
        }, body)
    }

    private static func encodedSize(of record: ChangeRecorder.TableRecord) -> Int {
        var size = 4 + 4 + 16 * storedRanges(of: record).count + 4 + 8 * record.deletions.count + 4
        for columns in record.modifications.values { size += 8 + 2 + 4 * columns.count }
        return size
    }

    private static func encode(_ tableId: UInt32, _ record: ChangeRecorder.TableRecord,
                               into writer: inout LittleEndianWriter) {
        writer.put(tableId)
        let ranges = storedRanges(of: record)
        writer.put(UInt32(ranges.count))
        for range in ranges {
            writer.put(range.lowerBound)
            writer.put(range.upperBound)
        }
        writer.put(UInt32(record.deletions.count))
        if !record.deletions.isEmpty {
            for key in record.deletions.sorted() { writer.put(key) }
        }
        writer.put(UInt32(record.modifications.count))
        if !record.modifications.isEmpty {
            for (key, columns) in record.modifications.sorted(by: { $0.key < $1.key }) {
                writer.put(key)
                writer.put(UInt16(columns.count))
                for column in columns.sorted() { writer.put(Int32(column)) }
            }
        }
    }

    /// The ranges of new keys a record stores: the inserted ones, split around new objects
    /// deleted again (most commits delete none, and store the ranges as they are).
    private static func storedRanges(of record: ChangeRecorder.TableRecord) -> [ClosedRange<ObjectKey>] {
        if record.deletedNew.isEmpty, !record.insertedRanges.contains(where: { $0.lowerBound == 0 }) {
            return record.insertedRanges
        }
        var ranges = [ClosedRange<ObjectKey>]()
        for range in record.insertedRanges {
            var low = range.lowerBound
            for key in range where record.deletedNew.contains(key) {
                if key > low { ranges.append(low...(key - 1)) }
                low = key &+ 1
            }
            if low <= range.upperBound, low != 0 { ranges.append(low...range.upperBound) }
        }
        return ranges
    }

    /// A record of a commit that changed no object: one table (a new, empty one) listed with no
    /// insertions, deletions or modifications (a record is never empty bytes).
    static func noObjectChanges(in tableId: UInt32) -> [UInt8] {
        var out = [UInt8]()
        for value in [tableId, 0, 0, 0] as [UInt32] { withUnsafeBytes(of: value.littleEndian) { out += $0 } }
        return out
    }

    /// The change set of a stored record; nil if the bytes are not a record.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> ChangeSet? {
        var offset = 0
        func take<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            defer { offset += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        var set = ChangeSet()
        while offset < bytes.count {
            guard let tableId = take(UInt32.self), let rangeCount = take(UInt32.self) else { return nil }
            var changes = ChangeSet.TableChanges()
            for _ in 0..<rangeCount {
                guard let low = take(UInt64.self), let high = take(UInt64.self), low <= high else { return nil }
                for key in low...high { changes.insertions.insert(key) }
            }
            guard let deletionCount = take(UInt32.self) else { return nil }
            for _ in 0..<deletionCount {
                guard let key = take(UInt64.self) else { return nil }
                changes.deletions.insert(key)
            }
            guard let modificationCount = take(UInt32.self) else { return nil }
            for _ in 0..<modificationCount {
                guard let key = take(UInt64.self), let columnCount = take(UInt16.self) else { return nil }
                var columns = Set<Int>()
                for _ in 0..<columnCount {
                    guard let column = take(Int32.self) else { return nil }
                    columns.insert(Int(column))
                }
                changes.modifications[key] = columns
            }
            set.tables[tableId] = changes
        }
        return set
    }
}
