// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation
import CLMDB

/// A failure reported by the storage engine (LMDB), before the Realm layer adds context.
///
/// Internal: the public surface only ever sees ``Realm/Error``, which wraps this with
/// what was being done and how to fix it.
struct StorageError: Error, CustomStringConvertible {
    enum Kind: Equatable {
        case notFound
        case mapFull
        case corrupted
        case versionMismatch
        case invalidFile
        case readersFull
        case permissionDenied
        case fileNotFound
        case readOnlyFileSystem
        case busy
        case diskFull
        case other
    }

    let kind: Kind
    /// The raw LMDB or errno code.
    let code: Int32
    /// What the engine was doing ("opening the environment", "committing").
    let operation: String

    /// What exactly is wrong, when Trellis found it rather than LMDB.
    let detail: String?

    init(code: Int32, operation: String, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.detail = detail
        switch code {
        case MDB_NOTFOUND: kind = .notFound
        case MDB_MAP_FULL: kind = .mapFull
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND: kind = .corrupted
        case MDB_VERSION_MISMATCH: kind = .versionMismatch
        case MDB_INVALID: kind = .invalidFile
        case MDB_READERS_FULL: kind = .readersFull
        case EACCES, EPERM: kind = .permissionDenied
        case ENOENT: kind = .fileNotFound
        case EROFS: kind = .readOnlyFileSystem
        case EBUSY, EAGAIN: kind = .busy
        case ENOSPC: kind = .diskFull
        default: kind = .other
        }
    }

    /// LMDB's own text for the code (it covers errno values too).
    var reason: String { detail ?? String(cString: mdb_strerror(code)) }

    var description: String { "\(operation) failed: \(reason) (code \(code))" }
}

/// Calls an LMDB function and turns a non-zero return code into a ``StorageError``.
@inline(__always)
func lmdbCheck(_ code: Int32, _ operation: @autoclosure () -> String) throws(StorageError) {
    if code != 0 { throw StorageError(code: code, operation: operation()) }
}
#endif
