import CLMDB

/// The cursors a write transaction writes through: one per database, opened on its third
/// write and closed before the transaction ends.
///
/// `mdb_put` makes a cursor for each call and finds the key's page from the root: about 500
/// instructions on a two-level tree (each page is looked up in the transaction's list of
/// changed pages). A cursor kept between writes skips that search when the key falls on the
/// page it already sits on, and an append (`MDB_APPEND`, a new object's row, index entry or
/// backlink) right after another append reads no page at all.
///
/// Once a database has its cursor, every write to it (put or delete) goes through that one
/// cursor. An append trusts the "at the last entry" mark the previous append left on the
/// cursor; LMDB moves a cursor when another one changes the pages under it, and a version that
/// wrote through both passed the same tests, but with one writing cursor per database no write
/// ever happens behind the mark, so correctness does not rest on that repositioning.
///
/// The first ``writesBeforeCursor`` writes to a database use `mdb_put` (or `mdb_del`), before
/// the cursor exists: opening and closing one costs about as much as the search it saves, and
/// a transaction writing a single object writes most databases once or twice.
///
/// The tables are allocated once per environment and shared by its write transactions, which
/// one thread holds at a time (the environment's handle gate). A value of this type is a few
/// pointers: copying it into a transaction retains nothing.
struct WriteCursors: @unchecked Sendable {  // see above: one thread at a time
    /// How many writes to a database go without a cursor.
    static let writesBeforeCursor: UInt8 = 2

    /// Indexed by database handle: the open cursor, or nil.
    private let cursors: UnsafeMutablePointer<OpaquePointer?>
    /// Indexed by database handle: writes made without a cursor in this transaction.
    private let writes: UnsafeMutablePointer<UInt8>
    /// The handles written in this transaction (element 0 holds their number), so ending it
    /// visits only those.
    private let written: UnsafeMutablePointer<Int>
    /// How many database handles the tables cover (LMDB's `maxdbs` plus its two own).
    private let capacity: Int

    /// Tables for an environment that opens at most `databaseLimit` named databases.
    static func allocate(databaseLimit: UInt32) -> WriteCursors {
        let capacity = Int(databaseLimit) + 2
        let cursors = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: capacity)
        cursors.initialize(repeating: nil, count: capacity)
        let writes = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        writes.initialize(repeating: 0, count: capacity)
        let written = UnsafeMutablePointer<Int>.allocate(capacity: capacity + 1)
        written.initialize(repeating: 0, count: capacity + 1)
        return WriteCursors(cursors: cursors, writes: writes, written: written, capacity: capacity)
    }

    /// Frees the tables (the environment's, when it closes; every cursor is closed by then).
    func deallocate() {
        cursors.deallocate()
        writes.deallocate()
        written.deallocate()
    }

    /// The cursor writing to `dbi` in `txn`: nil for the first ``writesBeforeCursor`` writes
    /// (the caller writes with `mdb_put`), opened on the next; nil as well when LMDB cannot open
    /// one (the caller's `mdb_put` then reports the same failure).
    @inline(__always)
    func cursor(_ dbi: DatabaseHandle, in txn: OpaquePointer) -> OpaquePointer? {
        let index = Int(dbi)
        guard index < capacity else { return nil }
        if let cursor = cursors[index] { return cursor }
        return countWrite(index, in: txn)
    }

    private func countWrite(_ index: Int, in txn: OpaquePointer) -> OpaquePointer? {
        let count = writes[index]
        if count == 0 {
            written[0] += 1
            written[written[0]] = index
        }
        if count < Self.writesBeforeCursor {
            writes[index] = count + 1
            return nil
        }
        var opened: OpaquePointer?
        guard mdb_cursor_open(txn, DatabaseHandle(index), &opened) == MDB_SUCCESS, let opened else { return nil }
        cursors[index] = opened
        return opened
    }

    /// Closes the cursor of `dbi`, if open (before the database is emptied); later writes open
    /// another.
    func close(_ dbi: DatabaseHandle) {
        let index = Int(dbi)
        guard index < capacity, let cursor = cursors[index] else { return }
        mdb_cursor_close(cursor)
        cursors[index] = nil
    }

    /// How many cursors are open (for tests).
    var openCount: Int { (0..<capacity).reduce(0) { $0 + (cursors[$1] == nil ? 0 : 1) } }

    /// Closes every cursor and forgets the writes counted: LMDB frees a write transaction's
    /// cursors when it ends, so they must be closed while it is live.
    func closeAll() {
        let count = written[0]
        guard count > 0 else { return }
        for position in 1...count {
            let index = written[position]
            if let cursor = cursors[index] {
                mdb_cursor_close(cursor)
                cursors[index] = nil
            }
            writes[index] = 0
        }
        written[0] = 0
    }
}
