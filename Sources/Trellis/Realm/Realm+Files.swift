import Foundation
import Synchronization

extension Realm {
    // MARK: - Copies

    /// Writes a compacted copy of the Realm's newest committed version to a new file (free
    /// space left out). The copy is consistent even while other threads and processes write.
    /// Inside a write transaction the copy holds the transaction's uncommitted changes too, as
    /// in Realm (the transaction stays open).
    ///
    /// With `encryptionKey` (64 bytes; any other length traps, as in Realm) the copy is
    /// encrypted with it, whatever the key of this Realm: this re-keys a file, and a copy
    /// without a key is a decrypted copy of an encrypted Realm.
    ///
    /// - Throws: ``Realm/Error`` `.fileExists` if a file is at `fileURL`, `.fail` for an
    ///   encryption key in the LMDB build (which cannot encrypt), or the file error of writing it.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        core.verifyThread()
        let path = fileURL.standardizedFileURL.path
        let key = try EncryptionKey.forFile(encryptionKey, path: path)
        if FileManager.default.fileExists(atPath: path) {
            throw Realm.Error(.fileExists, "'\(path)' already exists: writeCopy makes a new file. Choose another path, "
                + "or delete the file first.", fileURL: path)
        }
        // Written beside the destination under another name, flushed, then linked into place:
        // a process killed while copying leaves no partial file at the destination (only the
        // temporary one, `<name>.trellis-copy-<pid>`), and a file made there meanwhile is never
        // overwritten.
        let temporary = path + ".trellis-copy-\(getpid())"
        try? FileManager.default.removeItem(atPath: temporary)
        do {
            #if TRELLIS_LMDB
            _ = key  // nil: the LMDB build refused a key above
            if let writing = core.writeTransaction {
                try core.writePendingStateForCopy()
                try writing.copyContents(to: temporary, mapSize: core.file.environment.currentMapSize)
            } else {
                try core.file.environment.copyCompacted(to: temporary)
            }
            #else
            if let writing = core.writeTransaction {
                try core.writePendingStateForCopy()
                try writing.copyContents(to: temporary, mapSize: core.file.environment.currentMapSize, encryptionKey: key)
            } else {
                try core.file.environment.copyCompacted(to: temporary, encryptionKey: key)
            }
            #endif
            try Self.flush(temporary)
        } catch let error as StorageError {
            try? FileManager.default.removeItem(atPath: temporary)
            throw RealmErrors.opening(path, error)
        }
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST {
                throw Realm.Error(.fileExists, "'\(path)' already exists: writeCopy makes a new file. Choose another "
                    + "path, or delete the file first.", fileURL: path)
            }
            // A file system without hard links: move it (the existence check above stands).
            guard code == EPERM || code == EOPNOTSUPP, rename(temporary, path) == 0 else {
                throw Realm.Error(.fileAccess, "Could not write the copy to '\(path)': \(String(cString: strerror(code))).",
                                  fileURL: path)
            }
        }
    }

    /// fsyncs a file, so that it is on disk before it is linked into place.
    private static func flush(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StorageError(code: errno, operation: "opening the copy to flush it")
        }
        defer { try? handle.close() }
        if fsync(handle.fileDescriptor) != 0 { throw StorageError(code: errno, operation: "flushing the copy") }
    }

    /// Writes a compacted copy to the file of `configuration` (see ``writeCopy(toFile:encryptionKey:)``).
    public func writeCopy(configuration: Realm.Configuration) throws {
        guard let fileURL = configuration.fileURL else {
            throw Realm.Error(.fail, "writeCopy(configuration:) needs a configuration with a fileURL.")
        }
        try writeCopy(toFile: fileURL, encryptionKey: configuration.encryptionKey)
    }

    // MARK: - Migration

    /// Migrates the file of `configuration` now (runs its migration block if its schema
    /// version is higher than the file's) without keeping a Realm open, as Realm's
    /// `performMigration(for:)`. Opening a Realm does this by itself; call it to choose when.
    ///
    /// Traps with Realm's message "Cannot migrate Realms that are already open." while a Realm
    /// of this process has the file open.
    ///
    /// - Throws: what opening the Realm throws (``Realm/Error`` `.schemaMismatch`, file errors).
    ///
    /// The file stays reserved from the check to the end of the migration: another thread of the
    /// process opening it meanwhile waits, then opens the migrated file.
    public static func performMigration(for configuration: Realm.Configuration = .defaultConfiguration) throws {
        let path = configuration.path
        guard let reservation = FileState.reserve(path: path, for: .migration) else {
            throwRealmException("Cannot migrate Realms that are already open.")
        }
        defer { reservation.end() }
        FileState.didReserveHook.withLock { $0 }?(path, .migration)
        _ = try Realm(configuration: configuration)
    }

    // MARK: - Files

    /// Whether a Realm file exists for `configuration`.
    public static func fileExists(for configuration: Realm.Configuration) -> Bool {
        FileManager.default.fileExists(atPath: configuration.path)
    }

    /// Deletes the file of `configuration`. Returns whether a file existed. As in Realm, the
    /// lock file (`<path>-lock`) stays: a process about to open the file may already be waiting
    /// on it, and a second lock file made after a deletion would split the processes that share
    /// the file. Another thread or process opening the file meanwhile waits, then opens a new
    /// file.
    ///
    /// - Throws: ``Realm/Error`` `.alreadyOpen` while a Realm of this process or of another
    ///   process has it open (Realm's "Cannot delete files of an open Realm"), or the file error
    ///   of deleting it.
    @discardableResult
    public static func deleteFiles(for configuration: Realm.Configuration) throws -> Bool {
        let path = configuration.path
        guard let reservation = FileState.reserve(path: path, for: .deletion) else {
            throw deletingOpenFile(path, by: "a Realm of this process")
        }
        defer { reservation.end() }
        FileState.didReserveHook.withLock { $0 }?(path, .deletion)
        // Every process with the file open holds a shared lock on its lock file; holding the
        // exclusive one until the file is gone also makes other processes' opens wait.
        let exclusive: ExclusiveFileUse
        do {
            exclusive = try ExclusiveFileUse(taking: path)
        } catch .inUse {
            throw deletingOpenFile(path, by: "another process")
        } catch .lockFileUnavailable(let code) {
            // No folder: there is nothing to delete (as Realm answers).
            if code == ENOENT { return false }
            throw Realm.Error(.fileAccess, "Could not delete '\(path)': its lock file '\(path)-lock' cannot be opened "
                + "to check that no process has the file open (\(String(cString: strerror(code)))). Check the folder's "
                + "permissions.", fileURL: path)
        }
        defer { withExtendedLifetime(exclusive) {} }
        let existed = FileManager.default.fileExists(atPath: path)
        if existed {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw Realm.Error(.fileAccess, "Could not delete '\(path)': \(error.localizedDescription)", fileURL: path)
            }
        }
        return existed
    }

    /// Realm's error for deleting a file that is open.
    private static func deletingOpenFile(_ path: String, by holder: String) -> Realm.Error {
        Realm.Error(.alreadyOpen, "Cannot delete files of an open Realm: '\(path)' is still in use by \(holder). "
            + "Release every Realm, object and collection of it first.", fileURL: path)
    }
}

/// The schema version stored in the file at `fileURL`, read without opening it with model
/// classes (Realm's `schemaVersionAtURL`).
///
/// - Throws: ``Realm/Error`` for a missing, damaged or non-Trellis file.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    _ = try EncryptionKey.forFile(encryptionKey, path: fileURL.path)
    guard FileManager.default.fileExists(atPath: fileURL.standardizedFileURL.path) else {
        // Realm's code and words: there is no database there yet.
        throw Realm.Error(.invalidDatabase, "Realm at path '\(fileURL.path)' has not been initialized.",
                          fileURL: fileURL.path)
    }
    var configuration = Realm.Configuration.storedSchema(fileURL: fileURL, readOnly: true)
    configuration.encryptionKey = encryptionKey
    let realm = try Realm(configuration: configuration)
    return realm.core.file.catalog.schemaVersion
}

/// Opening work Realm does before a file is used: copying a seed file, compacting on launch.
enum FilePreparation {
    /// Copies the configuration's seed file into place when there is no file yet.
    static func copySeedIfNeeded(_ configuration: Realm.Configuration, path: String) throws {
        guard let seed = configuration.seedFilePath, !FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.copyItem(atPath: seed.standardizedFileURL.path, toPath: path)
        } catch {
            throw Realm.Error(.fileAccess, "Could not copy the seed file '\(seed.path)' to '\(path)': "
                + "\(error.localizedDescription)", fileURL: path)
        }
    }

    /// For tests: called with the path while a compaction on launch has its environment open
    /// and the compacted copy written, before it closes the environment and replaces the file.
    static let compactionHook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Compacts the file when the configuration asks to and no process has it open: a
    /// compacted copy is written beside it and renamed over it (atomic; a crash leaves the old
    /// file whole).
    ///
    /// Realm compacts only on the first open of the file in the process, when no other instance
    /// has it open. Here: no Realm of this process has it open, and no thread of the process
    /// opens it until the file is replaced (``FileState/reserve(path:for:)``, checked and
    /// taken under the file registry's lock); no other process has it open
    /// (``ExclusiveFileUse``, held from the check to the rename, makes their opens wait).
    /// `shouldCompactOnLaunch` runs under no lock: opening another file from it is fine.
    static func compactIfAsked(_ configuration: Realm.Configuration, path: String) throws {
        guard let shouldCompact = configuration.shouldCompactOnLaunch, !configuration.readOnly,
              FileManager.default.fileExists(atPath: path), let reservation = FileState.reserve(path: path, for: .compaction)
        else { return }
        defer { reservation.end() }
        guard let exclusive = ExclusiveFileUse(path: path) else { return }
        let compacted = path + ".compacting"
        try? FileManager.default.removeItem(atPath: compacted)
        do {
            let wantsCompaction: Bool = try {
                #if TRELLIS_LMDB
                let environment = try Environment(path: path, readOnly: false, initialMapSize: configuration.initialMapSize,
                                                  mapSizeLimit: configuration.maximumFileSize ?? Int.max)
                #else
                // The compacted copy keeps the file's key (a new salt: docs/STORAGE.md, section 12).
                let key = try EncryptionKey.forFile(configuration.encryptionKey, path: path)
                let environment = try Environment(path: path, readOnly: false, initialMapSize: configuration.initialMapSize,
                                                  mapSizeLimit: configuration.maximumFileSize ?? Int.max, encryptionKey: key)
                #endif
                let total = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
                guard shouldCompact(total, try environment.dataBytes()) else { return false }
                #if TRELLIS_LMDB
                try environment.copyCompacted(to: compacted)
                #else
                try environment.copyCompacted(to: compacted, encryptionKey: key)
                #endif
                compactionHook.withLock { $0 }?(path)
                return true
            }()
            withExtendedLifetime(exclusive) {}
            // Closing the environment released this process's locks on the lock file (POSIX
            // locks belong to the process): take the exclusive one again, and hold it while the
            // file is replaced.
            let again = wantsCompaction ? ExclusiveFileUse(path: path) : nil
            defer { withExtendedLifetime(again) {} }
            guard again != nil else {
                try? FileManager.default.removeItem(atPath: compacted)
                return
            }
            let before = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            if rename(compacted, path) != 0 {
                try? FileManager.default.removeItem(atPath: compacted)
                throw Realm.Error(.fileAccess, "Could not replace '\(path)' with its compacted copy: "
                    + String(cString: strerror(errno)), fileURL: path)
            }
            let after = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            Logger.log(.info, Category.Storage.all, "Compacted '\(path)' from \(before) to \(after) bytes")
        } catch let error as StorageError {
            try? FileManager.default.removeItem(atPath: compacted)
            throw RealmErrors.opening(path, error)
        }
    }
}
