// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

extension Transaction {
    /// Writes everything this transaction sees to a new TrellisStorage file at `path`, a write
    /// transaction's uncommitted changes included (what `writeCopy` inside a write transaction
    /// copies, as Realm does): each tree with its key order, its entries appended in key order
    /// (so the copy has no free pages), in one durable commit. `path` must not exist. The copy
    /// gets no lock file: nothing else opens it before it is complete.
    /// With `encryptionKey` the copy is encrypted with it (a new salt, so new page keys:
    /// docs/STORAGE.md, section 12), whatever this file's key; without, the copy is plain.
    func copyContents(to path: String, mapSize: Int = 0, encryptionKey: [UInt8]? = nil) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw StorageError(code: EEXIST, operation: "creating the copy '\(path)'")
        }
        do {
            var options = StorageEnvironment.Options()
            options.encryptionKey = encryptionKey
            let copy = try StorageEnvironment(file: try PosixFile(path: path), options: options)
            defer { copy.close() }
            let trees = try treesForCopy()
            try copy.write { target in
                for tree in trees {
                    try target.createTree(tree.name, order: tree.order)
                    var entry = tree.cursor.first()
                    while let (key, value) = entry {
                        try target.put(tree.name, key: Array(key), value: Array(value), mode: .append)
                        entry = tree.cursor.next()
                    }
                    if let failure = tree.cursor.failure { throw failure }
                }
            }
            // The engine grows a file in steps of 1 MiB: the copy ends after its last page.
            let pageBytes = UInt64(encryptionKey == nil ? StorageLimits.pageSize : StorageLimits.encryptedPageSize)
            let used = try copy.status().pageCount * pageBytes
            if try copy.file.size() > used { try copy.file.truncate(to: used) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StorageError.wrapping(error, operation: "writing the copy '\(path)'")
        }
    }
}

extension Environment {
    /// Writes a compacted copy of the newest committed version to a new file at `path`.
    /// Consistent while other threads and processes write: it reads one snapshot. Fails with
    /// `EEXIST` if `path` exists.
    func copyCompacted(to path: String, encryptionKey: [UInt8]? = nil) throws {
        let snapshot = try beginRead()
        defer { snapshot.abort() }
        try snapshot.copyContents(to: path, encryptionKey: encryptionKey)
    }
}
#endif
