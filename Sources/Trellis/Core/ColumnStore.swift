/// Where one class's column copy lives: chunks of `1 << shift` consecutive object keys, one
/// LMDB value each, in the integer-keyed database `c.<Class>` (chunk number → chunk).
///
/// Rows stay the home of every object (an object read is one lookup); the chunks hold the same
/// values column by column, so that a scan, an aggregate or a sort reads one packed array per
/// column instead of decoding every row. They are derived data: the rows a write transaction
/// changed are brought into them when it commits (see ``ColumnLog``), or, for a small
/// transaction, recorded in the delta that readers apply (see ``ColumnDelta``); the
/// consistency checker compares what readers see with the rows.
struct ColumnStorage {
    let database: DatabaseHandle
    /// The delta (see ``ColumnDelta``); nil when the file has none.
    let delta: DatabaseHandle?
    /// The rows the copy is made from (the delta's values are read there).
    let rows: DatabaseHandle
    /// log2 of the slots per chunk (8 in files Trellis makes; tests make it small).
    let shift: Int
    /// The kind of each row column, in row order.
    let kinds: [ColumnKind]

    var slotCount: Int { 1 << shift }

    static func name(_ className: String) -> String { "c.\(className)" }

    /// The chunk stored under `number`, if any and well formed, without the delta (what writers
    /// change; readers call ``chunk(_:in:)``).
    func storedChunk(_ number: UInt64, in txn: Transaction) -> ColumnChunk? {
        txn.get(database, integerKey: number).flatMap {
            ColumnChunk($0, slotCount: slotCount, baseKey: number << UInt64(shift))
        }
    }

    /// Calls `body` with each chunk built from the rows as they are, in key order (the chunks a
    /// copy made now would hold).
    func forEachChunkOfRows(in txn: Transaction, _ body: (UInt64, ChunkBuilder) throws -> Void) throws {
        guard let cursor = txn.existingCursor(rows) else { return }
        var builder: ChunkBuilder?
        var current: UInt64 = 0
        var entry = cursor.first()
        while let (rawKey, bytes) = entry {
            let key = Cursor.integerKey(rawKey)
            let number = key >> UInt64(shift)
            if let finished = builder, number != current {
                try body(current, finished)
                builder = nil
            }
            current = number
            let chunk = builder ?? ChunkBuilder(slotCount: slotCount, kinds: kinds)
            chunk.set(Int(key & UInt64(slotCount - 1)), row: RowView(bytes: bytes))
            builder = chunk
            entry = cursor.next()
        }
        if let cursorFailure = cursor.failure { throw cursorFailure }
        if let builder { try body(current, builder) }
    }

    /// Writes the chunks of every row (an upgraded file); the column database must be empty.
    func buildFromRows(in txn: Transaction) throws {
        try forEachChunkOfRows(in: txn) { number, builder in try put(builder, number: number, in: txn) }
        try setDeltaState(covered: keyAfterLastObject(in: txn), count: 0, in: txn)
    }

    /// Stores a patched chunk under `number`: as it is, rebuilt when unused bytes outweigh the
    /// rest, or deleted when no object is left in it.
    func put(_ patch: ChunkPatch, number: UInt64, in txn: Transaction) throws {
        if patch.isEmpty {
            try txn.delete(database, integerKey: number)
        } else if patch.wantsCompacting {
            try patch.bytes.withUnsafeBytes { bytes in
                guard let chunk = ColumnChunk(bytes, slotCount: slotCount) else { return }
                try put(ChunkBuilder(chunk, kinds: kinds), number: number, in: txn)
            }
        } else {
            try patch.bytes.withUnsafeBytes { try txn.put(database, integerKey: number, value: $0) }
        }
    }

    /// Stores `builder` under `number`, or deletes the chunk when no object is left in it.
    func put(_ builder: ChunkBuilder, number: UInt64, in txn: Transaction) throws {
        if builder.isEmpty {
            try txn.delete(database, integerKey: number)
        } else {
            try builder.encoded().withUnsafeBytes { try txn.put(database, integerKey: number, value: $0) }
        }
    }
}

/// The rows a write transaction wrote or deleted, in order, for the column copies of their
/// classes. Recording costs an append per row; ``flush(in:)``, before a commit and before a
/// scan in the write transaction reads the columns, records a small transaction's keys in the
/// delta, or brings each chunk that holds one of the rows up to date (patched or rebuilt once),
/// folding the delta in.
final class ColumnLog {
    /// The rows logged for one column copy, in the order they were written.
    private final class TableLog {
        /// The column copy, as the first row logged since the last flush found it (a migration
        /// may change its columns between transactions).
        var storage: ColumnStorage
        // A log belongs to one Realm's write transaction, on its thread: dynamic exclusivity
        // checks on these hot fields would cost more than the appends.
        /// Each logged row's object key and where its copy lies in `rows` (offset | length << 32;
        /// `deleted` for a delete).
        @exclusivity(unchecked) var entries: [(key: ObjectKey, span: UInt64)] = []
        /// Copies of the rows as written.
        let rows = ByteBuffer(capacity: 4096)
        /// The first key of an object this transaction made (its objects are in the log).
        @exclusivity(unchecked) var firstNewKey = ObjectKey.max
        /// The delta's state (``ColumnStorage/deltaState(in:)``) as the last flush left it: in
        /// which write (``ColumnLog/currentWrite``), of which version, for which delta tree.
        @exclusivity(unchecked) var knownState: KnownDeltaState?
        static let deleted = UInt64.max
        /// An entry whose values are read from the object's row as it is (a folded delta key).
        static let fromRow = UInt64.max - 1
        init(_ storage: ColumnStorage) { self.storage = storage }

        func clear() {
            firstNewKey = .max
            entries.removeAll(keepingCapacity: entries.count <= 4096)
            rows.removeAll()
        }
    }

    /// The logs by database handle (small integers), so that finding one costs an index.
    @exclusivity(unchecked) private var logs: [TableLog?] = []
    /// The databases with a log, in the order their first row was logged.
    @exclusivity(unchecked) private var order: [DatabaseHandle] = []
    @exclusivity(unchecked) private var count = 0
    /// Entries kept before a flush, so that one huge transaction does not hold every row twice.
    private static let flushThreshold = 1 << 13
    /// The number of the core's current write transaction (``beginWrite()``).
    @exclusivity(unchecked) private var currentWrite: UInt64 = 0
    /// The core's last write that committed as its own commit (``noteCommit(_:)``), and the
    /// version it made.
    @exclusivity(unchecked) private var committedWrite: (write: UInt64, version: Int)?

    /// The delta's state as one flush left it.
    struct KnownDeltaState {
        let write: UInt64
        let version: Int
        let delta: DatabaseHandle
        let covered: ObjectKey
        let count: Int
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    func recordWrite(_ table: Table, key: ObjectKey, row: UnsafeRawBufferPointer, isNew: Bool, in txn: Transaction) throws {
        guard let log = log(for: table) else { return }
        if isNew, key < log.firstNewKey { log.firstNewKey = key }
        let offset = log.rows.append(row)
        log.entries.append((key, UInt64(offset) | UInt64(row.count) << 32))
        count &+= 1
        if count >= Self.flushThreshold { try flush(in: txn) }
    }

    func recordDelete(_ table: Table, key: ObjectKey, in txn: Transaction) throws {
        guard let log = log(for: table) else { return }
        log.entries.append((key, TableLog.deleted))
        count &+= 1
        if count >= Self.flushThreshold { try flush(in: txn) }
    }

    /// The log of `table`'s column copy (one per database, whichever `Table` instance writes).
    @inline(__always)
    private func log(for table: Table) -> TableLog? {
        let index = table.columnDatabase
        guard index >= 0 else { return nil }
        if index < logs.count, let log = logs[index] {
            if log.entries.isEmpty, let storage = table.columns { log.storage = storage }
            return log
        }
        guard let storage = table.columns else { return nil }
        if index >= logs.count { logs += repeatElement(nil, count: index + 1 - logs.count) }
        let log = TableLog(storage)
        logs[index] = log
        order.append(storage.database)
        return log
    }

    /// Forgets what was recorded (the transaction ended, or its rows were all removed). The
    /// logs stay, emptied, for the next transaction (no allocation per small transaction).
    func reset() {
        if count == 0 { return }
        for database in order { logs[Int(database)]?.clear() }
        count = 0
    }

    /// A write transaction of the core begins (the states known from earlier flushes are
    /// trusted only as ``deltaState(_:_:in:)`` says).
    func beginWrite() { currentWrite &+= 1 }

    /// The core's write ended: committed as its own commit making `version` (nothing another
    /// writer did comes between it and that version), or (nil) rolled back, or committed with
    /// a schema change.
    func noteCommit(_ version: Int?) {
        committedWrite = version.map { (currentWrite, $0) }
    }

    /// Forgets every delta state known from a flush: something other than a flush changed the
    /// deltas in this write (`deleteAll`, a migration).
    func forgetDeltaStates() {
        committedWrite = nil
        for case let log? in logs { log.knownState = nil }
    }

    /// The delta's state as `txn` sees it: as a flush left it earlier in this write, or in the
    /// core's own commit that `txn` is based on; else read (a lookup of the delta tree).
    private func deltaState(_ log: TableLog, _ delta: DatabaseHandle, in txn: Transaction) -> (covered: ObjectKey, count: Int) {
        if let known = log.knownState, known.delta == delta,
           known.write == currentWrite && known.version == txn.version
            || known.write == committedWrite?.write && known.version == committedWrite?.version
                && known.version == txn.version - 1
        {
            return (known.covered, known.count)
        }
        return log.storage.deltaState(in: txn)
    }

    /// Writes every chunk the recorded rows fall in.
    func flush(in txn: Transaction) throws {
        guard count > 0 else { return }
        count = 0
        for database in order {
            guard let log = logs[Int(database)], !log.entries.isEmpty else { continue }
            try flush(log, in: txn)
            log.clear()
        }
    }

    private func flush(_ log: TableLog, in txn: Transaction) throws {
        let storage = log.storage
        let shift = UInt64(storage.shift)
        var entries = log.entries
        if let delta = storage.delta, entries.count <= ColumnDelta.smallTransaction {
            // A small transaction: the keys of covered objects it changed go to the delta, new
            // objects (past the covered key) are read from the rows; no chunk is written.
            let state = deltaState(log, delta, in: txn)
            let changed = entries.filter { $0.key < state.covered }
            let newest = entries.reduce(state.covered) { Swift.max($0, $1.key &+ 1) }
            if state.count + changed.count + Int(newest - state.covered) <= ColumnDelta.limit {
                for (key, _) in changed {
                    try [UInt8]().withUnsafeBytes { try txn.put(delta, integerKey: key, value: $0) }
                }
                if !changed.isEmpty {
                    try storage.setDeltaState(covered: state.covered, count: state.count + changed.count, in: txn)
                }
                log.knownState = KnownDeltaState(write: currentWrite, version: txn.version, delta: delta,
                                                 covered: state.covered, count: state.count + changed.count)
                return
            }
        }
        log.knownState = nil
        // Objects past the covered key that this transaction made are in the log already.
        let pending = storage.deltaKeys(from: 0, to: .max, rowsBelow: log.firstNewKey, in: txn)
        if let delta = storage.delta {
            // Folded into the chunks with this transaction's rows: the delta's objects are read
            // from their rows as they are now, before this transaction's logged rows (which
            // are as new or newer).
            if !pending.isEmpty { entries = pending.map { ($0, TableLog.fromRow) } + entries }
            if storage.deltaCount(in: txn) > 0 { try txn.empty(delta) }
            try storage.setDeltaState(covered: storage.keyAfterLastObject(in: txn), count: 0, in: txn)
        }
        // Rows usually come in key order (new objects): then each chunk's rows are one run.
        // Otherwise a stable sort by chunk gathers them, so the last write still wins.
        for index in entries.indices.dropFirst() where entries[index].key >> shift < entries[index - 1].key >> shift {
            entries = entries.enumerated().sorted {
                let (a, b) = ($0.element.key >> shift, $1.element.key >> shift)
                return a != b ? a < b : $0.offset < $1.offset
            }.map(\.element)
            break
        }
        try entries.withUnsafeBufferPointer { entries in
            var position = 0
            while position < entries.count {
                let number = entries[position].key >> shift
                var end = position + 1
                while end < entries.count, entries[end].key >> shift == number { end += 1 }
                try write(UnsafeBufferPointer(rebasing: entries[position..<end]), of: log, toChunk: number, in: txn)
                position = end
            }
        }
    }

    /// Applies the logged rows of one chunk, in order, to the chunk as stored, and stores it.
    private func write(_ entries: UnsafeBufferPointer<(key: ObjectKey, span: UInt64)>, of log: TableLog,
                       toChunk number: UInt64, in txn: Transaction) throws
    {
        let storage = log.storage
        let stored = storage.storedChunk(number, in: txn)
        if let stored, entries.count * 2 <= storage.slotCount, var patch = ChunkPatch(stored, kinds: storage.kinds) {
            // Up to half the chunk's objects: changed in a copy of its bytes.
            apply(entries, of: log, to: &patch, in: txn)
            try storage.put(patch, number: number, in: txn)
            return
        }
        var builder = stored.map { ChunkBuilder($0, kinds: storage.kinds) }
            ?? ChunkBuilder(slotCount: storage.slotCount, kinds: storage.kinds)
        apply(entries, of: log, to: &builder, in: txn)
        try storage.put(builder, number: number, in: txn)
    }

    private func apply<Changes: ChunkChanges>(_ entries: UnsafeBufferPointer<(key: ObjectKey, span: UInt64)>,
                                              of log: TableLog, to changes: inout Changes, in txn: Transaction)
    {
        let storage = log.storage
        let mask = UInt64(storage.slotCount - 1)
        for (key, span) in entries {
            switch span {
            case TableLog.fromRow:
                changes.refresh(key, slotMask: mask, rows: storage.rows, in: txn)
            case TableLog.deleted:
                changes.remove(Int(key & mask))
            default:
                let row = RowView(bytes: log.rows.bytes(at: Int(span & 0xFFFF_FFFF), length: Int(span >> 32)))
                changes.set(Int(key & mask), row: row, external: UnsafeRawPointer(log.rows.base))
            }
        }
    }
}
