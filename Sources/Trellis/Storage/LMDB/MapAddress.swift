// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB

/// Where LMDB mapped a database file in this process.
///
/// LMDB 0.9 does not say: `mdb_env_info`'s `me_mapaddr` is the address *requested* with
/// `MDB_FIXEDMAP`, zero otherwise. A page the map holds does say: every page of the file begins
/// with its own page number, and LMDB places page `n` at `n * pageSize` from the start of the
/// map. So the first key of the main database (a named database's name, stored inside a leaf
/// page that LMDB has just read) gives the start of the map.
enum MapAddress {
    /// The first address of the map of `environment`, or nil when the file has no named
    /// database yet (a new file) or the page does not look like an LMDB page.
    static func find(environment: OpaquePointer) -> UInt? {
        var statistics = MDB_stat()
        guard mdb_env_stat(environment, &statistics) == 0 else { return nil }
        let pageSize = UInt(statistics.ms_psize)
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { return nil }

        var transaction: OpaquePointer?
        guard mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction) == 0, let transaction else {
            return nil
        }
        defer { mdb_txn_abort(transaction) }
        var mainDatabase: MDB_dbi = 0
        var cursor: OpaquePointer?
        guard mdb_dbi_open(transaction, nil, 0, &mainDatabase) == 0,
              mdb_cursor_open(transaction, mainDatabase, &cursor) == 0, let cursor
        else { return nil }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        guard mdb_cursor_get(cursor, &key, &value, MDB_FIRST) == 0, let keyAddress = key.mv_data else { return nil }

        // A read transaction's leaf page is in the map, and LMDB has read it: its header is safe
        // to read. Its first word is the page number.
        let pageStart = UInt(bitPattern: keyAddress) & ~(pageSize - 1)
        guard let header = UnsafeRawPointer(bitPattern: pageStart) else { return nil }
        let pageNumber = header.loadUnaligned(as: UInt.self)
        let (offset, overflow) = pageNumber.multipliedReportingOverflow(by: pageSize)
        guard !overflow, offset <= pageStart else { return nil }
        return pageStart - offset
    }
}
#endif
