// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB

/// The cursors a write transaction writes through: one per database, opened once the
/// transaction has made ``writesBeforeCursors`` writes and closed before it ends.
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
/// The first ``writesBeforeCursors`` writes of a transaction use `mdb_put` (or `mdb_del`), with
/// no cursor: a small transaction (one object added) writes most databases once or twice, and
/// opening and closing a cursor costs about what it saves there. Counting writes per
/// transaction rather than per database keeps that check to one comparison.
///
/// The tables are allocated once per environment and shared by its write transactions, which
/// one thread holds at a time (the environment's handle gate). A value of this type is a few
/// pointers: copying it into a transaction retains nothing.
struct WriteCursors: @unchecked Sendable {  // see above: one thread at a time
    /// How many writes of a transaction go without cursors.
    static let writesBeforeCursors = 16

    /// Indexed by database handle: the open cursor, or nil.
    private let cursors: UnsafeMutablePointer<OpaquePointer?>
    /// The handles of the open cursors (the first ``Counts/open``), so that ending a
    /// transaction visits only those.
    private let openHandles: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Counts>
    /// How many database handles the tables cover (LMDB's `maxdbs` plus its two own).
    private let capacity: Int

    private struct Counts {
        /// Writes made without cursors in this transaction.
        var writesWithoutCursors = 0
        /// Cursors open.
        var open = 0
    }

    /// Tables for an environment that opens at most `databaseLimit` named databases.
    static func allocate(databaseLimit: UInt32) -> WriteCursors {
        let capacity = Int(databaseLimit) + 2
        let cursors = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: capacity)
        cursors.initialize(repeating: nil, count: capacity)
        let openHandles = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        let counts = UnsafeMutablePointer<Counts>.allocate(capacity: 1)
        counts.initialize(to: Counts())
        return WriteCursors(cursors: cursors, openHandles: openHandles, counts: counts, capacity: capacity)
    }

    /// Frees the tables (the environment's, when it closes; every cursor is closed by then).
    func deallocate() {
        cursors.deallocate()
        openHandles.deallocate()
        counts.deallocate()
    }

    /// The cursor writing to `dbi` in `txn`: nil for the transaction's first
    /// ``writesBeforeCursors`` writes (the caller writes with `mdb_put`), then opened on the
    /// database's next write; nil as well when LMDB cannot open one (the caller's `mdb_put`
    /// then reports the same failure).
    @inline(__always)
    func cursor(_ dbi: DatabaseHandle, in txn: OpaquePointer) -> OpaquePointer? {
        let index = Int(dbi)
        guard index < capacity else { return nil }
        if let cursor = cursors[index] { return cursor }
        if counts.pointee.writesWithoutCursors < Self.writesBeforeCursors {
            counts.pointee.writesWithoutCursors += 1
            return nil
        }
        return open(index, in: txn)
    }

    private func open(_ index: Int, in txn: OpaquePointer) -> OpaquePointer? {
        var cursor: OpaquePointer?
        guard mdb_cursor_open(txn, DatabaseHandle(index), &cursor) == MDB_SUCCESS, let cursor else { return nil }
        cursors[index] = cursor
        openHandles[counts.pointee.open] = index
        counts.pointee.open += 1
        return cursor
    }

    /// Closes the cursor of `dbi`, if open (before the database is emptied); a later write
    /// opens another.
    func close(_ dbi: DatabaseHandle) {
        let index = Int(dbi)
        guard index < capacity, let cursor = cursors[index] else { return }
        mdb_cursor_close(cursor)
        cursors[index] = nil
        let last = counts.pointee.open - 1
        for position in 0...last where openHandles[position] == index {
            openHandles[position] = openHandles[last]
            counts.pointee.open = last
            return
        }
    }

    /// How many cursors are open (for tests).
    var openCount: Int { (0..<capacity).reduce(0) { $0 + (cursors[$1] == nil ? 0 : 1) } }

    /// Closes every cursor and forgets the writes counted: LMDB frees a write transaction's
    /// cursors when it ends, so they must be closed while it is live.
    func closeAll() {
        counts.pointee.writesWithoutCursors = 0
        for position in 0..<counts.pointee.open {
            let index = openHandles[position]
            if let cursor = cursors[index] { mdb_cursor_close(cursor) }
            cursors[index] = nil
        }
        counts.pointee.open = 0
    }
}
#endif
