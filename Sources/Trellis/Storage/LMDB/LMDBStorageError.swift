// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation
import CLMDB

/// LMDB's codes and words for ``StorageError`` (the type is shared: Storage/StorageError.swift).
extension StorageError {
    /// An error LMDB returned (its own codes, or an errno).
    init(code: Int32, operation: String, detail: String? = nil) {
        let kind: Kind
        switch code {
        case MDB_NOTFOUND: kind = .notFound
        case MDB_MAP_FULL: kind = .mapFull
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND: kind = .corrupted
        case MDB_VERSION_MISMATCH: kind = .versionMismatch
        case MDB_INVALID: kind = .invalidFile
        case MDB_READERS_FULL: kind = .readersFull
        default: kind = Self.kind(ofErrno: code)
        }
        self.init(kind: kind, code: code, operation: operation, detail: detail)
    }

    /// LMDB's own text for the code (it covers errno values too).
    var reason: String { detail ?? String(cString: mdb_strerror(code)) }
}

/// Calls an LMDB function and turns a non-zero return code into a ``StorageError``.
@inline(__always)
func lmdbCheck(_ code: Int32, _ operation: @autoclosure () -> String) throws(StorageError) {
    if code != 0 { throw StorageError(code: code, operation: operation()) }
}
#endif
