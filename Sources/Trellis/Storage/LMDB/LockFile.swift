// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB
import Foundation

/// LMDB's lock file (`<file>-lock`): the reader table and the writer's mutex, memory-mapped.
enum LockFile {
    /// The size LMDB gives a lock file with `readers` reader slots: a 128-byte header, then one
    /// 64-byte slot per reader (`MDB_txninfo`, with the first slot inside the header's size).
    static func size(readers: UInt32) -> Int { Int(readers) * 64 + 128 }

    /// Makes sure a new lock file's pages exist on disk before LMDB maps it.
    ///
    /// LMDB extends a new lock file with `ftruncate`, which leaves a hole, then writes to it
    /// through the map: on a full disk the first write into the hole stops the process with
    /// SIGBUS. Allocating the blocks first turns that into `ENOSPC` (a typed `diskFull` error).
    /// The file's size is left to LMDB (`FALLOC_FL_KEEP_SIZE`): every process sizes its reader
    /// table by it, so only LMDB may set it. An existing lock file is in use and left alone.
    static func reserveSpace(path: String, readers: UInt32) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        // Not writable here (a read-only file system, permissions): LMDB decides what that means.
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size == 0 else { return }
        if trellis_reserve_blocks(descriptor, 0, Int64(size(readers: readers))) != 0 {
            let code = errno
            guard code == ENOSPC || code == EDQUOT else { return }  // unsupported: LMDB as before
            unlink(path)  // made just now: leave nothing half-made
            throw StorageError(code: ENOSPC, operation: "reserving the lock file '\(path)'")
        }
    }
}
#endif
