// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import Synchronization
import TrellisStorage

/// One open TrellisStorage file, shared by every `Realm` of the process that opens the same path.
///
/// The file holds one tree per named database (docs/ARCHITECTURE.md); `<path>-lock` beside it
/// holds the reader table of every process. Readers are not tied to threads, so a `Realm` may
/// pin its snapshot for as long as it likes.
final class Environment: Sendable {
    /// The engine's environment. Safe to share: TrellisStorage's environment takes its own locks.
    let store: StorageEnvironment
    let path: String
    let isReadOnly: Bool
    /// The largest size the file may grow to (``Realm/Configuration/maximumFileSize``),
    /// enforced by the engine at commit.
    let mapSizeLimit: Int
    /// The names behind the database handles, and the gate of the write transactions.
    let handles = DatabaseHandles()
    /// The tree accesses array of the last write transaction, emptied (every entry nil), for the
    /// next one: grown once, not per write. Used only by the holder of the write gate
    /// (`handles.gate`), which a write transaction takes before it takes this and gives back
    /// after it leaves it here.
    nonisolated(unsafe) var spareWriteAccesses: [TreeAccess?] = []
    /// A shared lock on the first byte of the lock file, held while the environment is open:
    /// how ``ExclusiveFileUse`` tells that another process has the file open (as with LMDB);
    /// -1 when a read-only open could not make the lock file.
    private let openMarker: Int32
    /// The sync-on-commit setting last given to the engine (nil: none yet).
    private let syncOnCommit = Mutex<Bool?>(nil)
    /// The 64-byte key the file was opened with (Realm's `encryptionKey`), nil for a plain file.
    let encryptionKey: [UInt8]?

    /// Reader slots of the lock file: one per live snapshot of every process (each `Realm`, each
    /// frozen version). Slots of processes that died are cleared by the engine.
    static let defaultMaximumReaders: UInt32 = 4096

    /// Opens (creating if needed) the file at `path`. `initialMapSize` and `expectedDatabases`
    /// are the LMDB build's sizing hints; TrellisStorage needs neither.
    init(path: String, readOnly: Bool, initialMapSize: Int, mapSizeLimit: Int,
         maximumReaders: UInt32 = Environment.defaultMaximumReaders, expectedDatabases: Int = 0,
         encryptionKey: [UInt8]? = nil) throws
    {
        if readOnly, !FileManager.default.fileExists(atPath: path) {
            throw StorageError(code: ENOENT, operation: "opening '\(path)'")
        }
        // A failed open removes nothing, not even a lock file it made itself: another process may
        // have opened that lock file in the meantime (a creator that has not linked its data file
        // yet), and removing it would give later processes a second reader table (issue 37).
        // The engine never leaves a half-made database file (it appears whole or not at all,
        // FileCreation.swift); a lock file left behind is an empty file or a valid table, reused
        // by the next open, as Realm's `.lock` and LMDB's `-lock` are.
        let marker = try Self.openMarker(path + "-lock", readOnly: readOnly)
        if marker >= 0 {
            var lock = flock()
            lock.l_type = Int16(F_RDLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 1
            // Waits while another process holds it exclusively (it is replacing the file).
            while fcntl(marker, F_SETLKW, &lock) != 0 && errno == EINTR {}
        }
        var options = StorageEnvironment.Options()
        options.readerSlots = Int(maximumReaders)
        options.readOnly = readOnly
        // The engine refuses a commit that would grow the file past it (Realm's maximumFileSize).
        if mapSizeLimit < Int.max { options.maximumFileSize = UInt64(mapSizeLimit) }
        options.encryptionKey = encryptionKey
        do {
            store = try StorageEnvironment(path: path, options: options)
        } catch {
            if marker >= 0 { close(marker) }
            if readOnly, let refusal = Self.unwritableLockFile(path) { throw refusal }
            throw StorageError.wrapping(error, operation: "opening '\(path)'")
        }
        openMarker = marker
        self.encryptionKey = encryptionKey
        self.path = path
        self.isReadOnly = readOnly
        self.mapSizeLimit = mapSizeLimit
    }

    /// The lock file's descriptor for the open marker; -1 for a read-only open that cannot
    /// make the lock file (a read-only folder or file system: then no process writes the file).
    private static func openMarker(_ lockPath: String, readOnly: Bool) throws -> Int32 {
        let marker = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if marker >= 0 { return marker }
        let failure = errno
        if readOnly, failure == EACCES || failure == EPERM || failure == EROFS {
            let reading = open(lockPath, O_RDONLY | O_CLOEXEC)
            if reading >= 0 || errno == ENOENT { return reading }
        }
        throw StorageError(code: failure, operation: "opening '\(lockPath)'")
    }

    /// The error of a read-only open whose lock file exists but cannot be written by this process
    /// (another user's database), nil otherwise. Such an open is refused, as LMDB refuses it: a
    /// reader records the commit it reads in the lock file so that a writer of any process never
    /// reuses its pages; a reader that cannot could see a page change under it. Only where no
    /// lock file can exist (a read-only file system, or a folder it is missing from and cannot
    /// be made in: no process writes the file then) does a reader use a table of its own
    /// (docs/STORAGE.md, section 6).
    private static func unwritableLockFile(_ path: String) -> StorageError? {
        let lockPath = path + "-lock"
        guard FileManager.default.fileExists(atPath: lockPath), access(lockPath, W_OK) != 0,
              errno == EACCES || errno == EPERM else { return nil }
        return StorageError(kind: .lockFileNotWritable, code: EACCES, operation: "opening '\(path)'",
                            detail: "its lock file '\(lockPath)' cannot be written by this user, and a reader records "
                                + "there the version it reads, so that no writer reuses its pages. Make the lock file "
                                + "writable for this user (chmod a+rw '\(lockPath)'), or copy the database into a "
                                + "folder of your own.")
    }

    deinit {
        Self.willCloseHook.withLock { $0 }?(path)
        store.close()
        if openMarker >= 0 { close(openMarker) }
        Self.forgetClosed(path: path, identity: ObjectIdentifier(self))
    }

    /// Frees reader slots of processes that died. TrellisStorage clears them itself whenever it
    /// looks for the oldest reader or a free slot; nothing is left to do here.
    @discardableResult
    func clearDeadReaders() -> Int { 0 }

    /// The version of the last commit (of any process).
    var lastCommittedVersion: Int { (try? store.status()).map { Int($0.txnID) } ?? 0 }

    /// How many versions the file keeps alive: from the oldest snapshot a live reader of any
    /// process holds to the last commit (Realm's `maximumNumberOfActiveVersions` counts these).
    func activeVersionCount() -> Int {
        guard let status = try? store.status() else { return 1 }
        let last = Int(status.txnID)
        let oldest = status.oldestReader.map { Int($0) } ?? last
        return max(1, last - min(oldest, last) + 1)
    }

    // MARK: - Transactions

    func beginRead() throws -> Transaction {
        try Transaction(environment: self, readOnly: true)
    }

    /// Begins the write transaction; `holdingGate`: the caller took the write gate for it.
    func beginWrite(holdingGate: Bool = false) throws -> Transaction {
        if isReadOnly {
            if holdingGate { handles.gate.release() }
            throw StorageError(code: EACCES, operation: "beginning a write transaction",
                               detail: "'\(path)' was opened read-only")
        }
        return try Transaction(environment: self, readOnly: false, holdingGate: holdingGate)
    }

    /// The LMDB build grows its memory map between transactions; TrellisStorage maps the file as
    /// it grows, so a write never needs to release the snapshot for that.
    var wantsToGrow: Bool { false }

    // MARK: - Sizes

    /// Bytes the newest version's data occupies (its pages, without the free ones): what a
    /// compacted copy would hold.
    func dataBytes() throws -> Int {
        do {
            let report = try store.check()
            return (report.pagesInUse + 3) * store.filePageSize
        } catch {
            throw StorageError.wrapping(error, operation: "measuring '\(path)'")
        }
    }

    /// The size of the file now (the LMDB build's map size).
    var mapSize: Int { Int((try? store.file.size()) ?? 0) }

    /// The size of the file now.
    var currentMapSize: Int { mapSize }

    /// Bytes up to the last page the newest commit counts.
    func usedBytes() -> Int {
        guard let status = try? store.status() else { return mapSize }
        return Int(status.pageCount) * store.filePageSize
    }

    /// Whether commits sync before returning (the default) or leave flushing to the OS. Every
    /// open sets it, so it is written only when it changes.
    func setSyncOnCommit(_ sync: Bool) {
        syncOnCommit.withLock { current in
            guard current != sync else { return }
            store.syncOnCommit = sync
            current = sync
        }
    }
}

// MARK: - Registry

extension Environment {
    private static let registry = Mutex<[String: WeakEnvironment]>([:])

    /// An environment of the registry; its entry stays until the engine has closed it.
    private final class WeakEnvironment: @unchecked Sendable {
        // @unchecked Sendable: read and written only under the registry's lock.
        weak var environment: Environment?
        let identity: ObjectIdentifier

        init(_ environment: Environment) {
            self.environment = environment
            self.identity = ObjectIdentifier(environment)
        }
    }

    /// For tests: called with an environment's path as it begins to close.
    static let willCloseHook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Whether this process has an environment of a file: none, an open one, or one still closing.
    enum Presence { case none, open, closing }

    /// Whether this process has an environment of `path` (see ``Presence``).
    static func presence(path: String) -> Presence {
        registry.withLock { environments in
            guard let entry = environments[path] else { return .none }
            return entry.environment == nil ? .closing : .open
        }
    }

    private static func forgetClosed(path: String, identity: ObjectIdentifier) {
        registry.withLock { environments in
            if environments[path]?.identity == identity { environments[path] = nil }
        }
    }

    /// Returns the process's environment for `path`, opening it if needed.
    ///
    /// With `verifiesFile`, the first open in the process checks the whole file (every page's
    /// checksum, key order, counts: `StorageEnvironment.check()`) and fails with a `corrupted`
    /// error naming the damaged page. Without it, pages are still checked as they are first read.
    /// A file whose previous environment is still closing waits for it: closing releases the
    /// process's POSIX lock on the lock file (``ExclusiveFileUse``), which the new one holds too.
    static func shared(path: String, readOnly: Bool, initialMapSize: Int, mapSizeLimit: Int,
                       verifiesFile: Bool = true, expectedDatabases: Int = 0,
                       encryptionKey: [UInt8]? = nil) throws -> Environment
    {
        // A file of an earlier Trellis (LMDB format) is converted before its first open here.
        if presence(path: path) == .none { try LegacyFileFormat.prepare(path: path, readOnly: readOnly) }
        while true {
            // An environment that failed its check closes after the registry's lock is released
            // (its deinit takes that lock).
            var refused: Environment?
            let result = openOrReuse(path: path, readOnly: readOnly, mapSizeLimit: mapSizeLimit,
                                     verifiesFile: verifiesFile, encryptionKey: encryptionKey, refused: &refused)
            refused = nil
            if let result { return try result.get() }
            usleep(50)
        }
    }

    private static func openOrReuse(path: String, readOnly: Bool, mapSizeLimit: Int, verifiesFile: Bool,
                                    encryptionKey: [UInt8]?, refused: inout Environment?) -> Result<Environment, StorageError>?
    {
        registry.withLock { envs in
            if let entry = envs[path] {
                if let existing = entry.environment {
                    guard existing.encryptionKey == encryptionKey else { return .failure(.mismatchedKey(path)) }
                    return .success(existing)
                }
                return nil
            }
            do {
                let env = try Environment(path: path, readOnly: readOnly, initialMapSize: 0, mapSizeLimit: mapSizeLimit,
                                          encryptionKey: encryptionKey)
                if verifiesFile {
                    do {
                        _ = try env.store.check()
                    } catch {
                        refused = env
                        throw StorageError.wrapping(error, operation: "checking '\(path)'")
                    }
                }
                envs[path] = WeakEnvironment(env)
                return .success(env)
            } catch let error as StorageError {
                return .failure(error)
            } catch {
                return .failure(StorageError.wrapping(error, operation: "opening '\(path)'"))
            }
        }
    }
}
#endif
