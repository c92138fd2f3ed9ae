import CLMDB
import Foundation
import Synchronization

/// One open LMDB environment: a memory-mapped database file shared by every `Realm` of the
/// process that opens the same path (LMDB forbids opening one file twice in a process).
///
/// The file is a single LMDB file (`MDB_NOSUBDIR`) with a `-lock` file beside it. Readers are
/// not tied to threads (`MDB_NOTLS`), so a `Realm` may pin its snapshot for as long as it likes.
final class Environment: Sendable {
    // Safe to share: LMDB's environment handle is thread-safe; the pointer itself never changes
    // after init and is closed only in deinit, when no transaction can hold it.
    nonisolated(unsafe) let handle: OpaquePointer
    let path: String
    let isReadOnly: Bool
    let mapSize: Int
    /// Named database handles opened so far, by name. Handles stay valid until the env closes.
    private let databases = Mutex<[String: MDB_dbi]>([:])

    static let maximumNamedDatabases: UInt32 = 4096
    static let maximumReaders: UInt32 = 1024

    init(path: String, readOnly: Bool, mapSize: Int) throws {
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "creating the environment")
        guard let env else { throw StorageError(code: ENOMEM, operation: "creating the environment") }
        do {
            try lmdbCheck(mdb_env_set_maxdbs(env, Self.maximumNamedDatabases), "setting the database limit")
            try lmdbCheck(mdb_env_set_maxreaders(env, Self.maximumReaders), "setting the reader limit")
            try lmdbCheck(mdb_env_set_mapsize(env, mapSize), "setting the map size")
            var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
            if readOnly { flags |= UInt32(MDB_RDONLY) }
            try lmdbCheck(mdb_env_open(env, path, flags, 0o644), "opening '\(path)'")
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.handle = env
        self.path = path
        self.isReadOnly = readOnly
        self.mapSize = mapSize
    }

    deinit {
        mdb_env_close(handle)
    }

    // MARK: - Named databases

    func cachedDatabase(named name: String) -> MDB_dbi? {
        databases.withLock { $0[name] }
    }

    func remember(_ dbi: MDB_dbi, named name: String) {
        databases.withLock { $0[name] = dbi }
    }

    func forget(named names: [String]) {
        databases.withLock { cache in for name in names { cache[name] = nil } }
    }

    // MARK: - Transactions

    func beginRead() throws -> Transaction {
        try Transaction(environment: self, readOnly: true)
    }

    func beginWrite() throws -> Transaction {
        try Transaction(environment: self, readOnly: false)
    }
}

// MARK: - Registry

extension Environment {
    private static let registry = Mutex<[String: WeakEnvironment]>([:])

    private struct WeakEnvironment {
        weak var environment: Environment?
    }

    /// Returns the process's environment for `path`, opening it if needed.
    ///
    /// Every `Realm` of one file in one process shares the same environment, as LMDB requires.
    static func shared(path: String, readOnly: Bool, mapSize: Int) throws -> Environment {
        let result: Result<Environment, StorageError> = registry.withLock { envs in
            if let existing = envs[path]?.environment { return .success(existing) }
            do {
                let env = try Environment(path: path, readOnly: readOnly, mapSize: mapSize)
                envs[path] = WeakEnvironment(environment: env)
                return .success(env)
            } catch let error as StorageError {
                return .failure(error)
            } catch {
                return .failure(StorageError(code: EIO, operation: "opening '\(path)'"))
            }
        }
        return try result.get()
    }
}

extension Environment {
    /// Whether commits fsync before returning (LMDB's default) or leave flushing to the OS.
    func setSyncOnCommit(_ sync: Bool) {
        mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), sync ? 0 : 1)
    }
}
