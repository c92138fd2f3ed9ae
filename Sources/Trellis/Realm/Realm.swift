import Foundation
import Synchronization

/// A Trellis database: a file of objects, read from a pinned snapshot and changed in write
/// transactions.
///
/// ```swift
/// let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Person.self, Dog.self]))
/// try realm.write {
///     realm.add(Person(value: ["name": "Ana"]))
/// }
/// let people = realm.objects(Person.self)
/// ```
///
/// A `Realm` reads from the snapshot it pinned when it was opened (or last refreshed or
/// written); commits from other instances become visible after ``refresh()`` or at the next
/// ``write(withoutNotifying:_:)``. Instances are confined to the thread that opened them: on one thread,
/// opening the same file twice gives the same instance.
public struct Realm {
    let core: RealmCore
    /// What lookups and adds keep for the next call: the accessor handed out last, the add
    /// session (see ``RealmSpares``); nil for a frozen `Realm`, or one made from an object or a
    /// collection while no opened one is alive.
    let spares: RealmSpares?

    init(core: RealmCore) {
        self.core = core
        spares = core.isFrozen ? nil : core.spares
    }

    /// A `Realm` the program opened: it shares the core's spares, made if there are none.
    init(opened core: RealmCore) {
        self.core = core
        spares = RealmSpares.shared(by: core)
    }

    // MARK: - Opening

    /// Opens the Realm of ``Configuration/defaultConfiguration`` (confined to `queue` if given).
    public init(queue: DispatchQueue? = nil) throws {
        try self.init(configuration: .defaultConfiguration, queue: queue)
    }

    /// Opens the Realm described by `configuration`, confined to the calling thread, or to
    /// `queue` (then it must be opened from code running on that queue, as in Realm).
    ///
    /// - Throws: ``Realm/Error`` when the file cannot be opened, is not a Trellis file, the models
    ///   break a schema rule (every problem is listed), or they differ from the file's schema.
    public init(configuration: Configuration, queue: DispatchQueue? = nil) throws {
        defer { configuration.syncHook?.realmDidOpen(configuration) }
        guard let queue else {
            self.init(opened: try RealmOpener.open(configuration))
            return
        }
        if !queue.isCurrent {
            throwRealmException("Realm opened from incorrect dispatch queue: open it from code running on "
                + "'\(queue.label)'.")
        }
        self.init(opened: try RealmOpener.open(configuration, confinement: .queue(queue)))
    }

    /// Opens the Realm at `fileURL` with the default configuration otherwise.
    public init(fileURL: URL) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        try self.init(configuration: configuration)
    }

    /// The configuration this Realm was opened with.
    public var configuration: Configuration { core.configuration }

    /// The classes of this Realm: those configured in ``Configuration/objectTypes`` (other
    /// classes the file stores are left out, as in Realm: reading them traps, by type or by
    /// name, with Realm's "is not managed by the Realm");
    /// without them, every model class of the program and every class stored in the file.
    public var schema: Schema {
        var byName = [String: ObjectSchema]()
        if core.configuration.objectTypes == nil || core.configuration.opensAnySchemaVersion {
            for stored in core.file.catalog.classes { byName[stored.name] = stored.objectSchema }
        }
        // The model classes name their properties by Swift name (propertiesMapping()): the
        // configured ones, else those of the default schema (see SchemaBinder.defaultSchema);
        // a Realm of the file's stored schema (the trellis tool) has none.
        let models = core.configuration.opensAnySchemaVersion ? []
            : core.configuration.objectTypes ?? core.file.catalog.classes.compactMap(SchemaCatalog.modelClass(of:))
        for type in models {
            let info = ClassInfo.unbound(for: type)
            byName[info.className] = info.objectSchema
        }
        // The default schema (no objectTypes) holds every model class of the program, as in
        // Realm; a class joins the file when first used (see ProgramModelClasses for the limits).
        if core.configuration.objectTypes == nil, !core.configuration.opensAnySchemaVersion {
            for schema in ProgramModelClasses.objectSchemas where byName[schema.className] == nil {
                byName[schema.className] = schema
            }
        }
        return Schema(Array(byName.values))
    }

    /// Whether the Realm contains no objects.
    public var isEmpty: Bool {
        core.verifyThread()
        // RLMRealm.isEmpty reads realm-core's group, which a closed (invalidated frozen) Realm refuses.
        if core.isClosed { RealmCore.trapClosed() }
        let txn = core.transaction
        for stored in core.file.catalog.classes where !stored.embedded {
            if let dbi = core.file.environment.handles.handle(named: Table.rowsName(stored.name)),
               txn.entryCount(dbi) > 0 { return false }
        }
        // Classes whose tables the current write created are not in the file's catalog yet.
        return !core.pendingTablesHoldObjects
    }

    // MARK: - Transactions

    /// Whether a write transaction is open.
    public var isInWriteTransaction: Bool { core.isInWriteTransaction }

    /// Runs `block` in a write transaction and commits it, returning the block's value.
    ///
    /// If `block` throws, the transaction is cancelled and the error rethrown. Nesting writes
    /// traps ("The Realm is already in a write transaction"). The commit does not notify the
    /// observers of `tokens` (their state still moves on): for changes a UI already shows.
    ///
    /// - Throws: the block's error, or ``Realm/Error`` if the commit fails (disk full, size limit).
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws
        -> Result
    {
        beginWrite()
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }

    /// Begins a write transaction, waiting for any other writer (thread or process) to finish.
    /// The Realm moves to the newest version first.
    public func beginWrite() { core.beginWrite() }

    /// Commits the write transaction; the data is on disk when this returns (unless
    /// ``Configuration/syncOnCommit`` is off). The observers of `tokens` are not notified of it.
    ///
    /// - Throws: ``Realm/Error`` if the commit fails; the transaction is then rolled back.
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        try core.commitWrite(withoutNotifying: tokens)
    }

    /// Discards the write transaction's changes. Objects created in it become invalidated.
    public func cancelWrite() { core.cancelWrite() }

    // MARK: - Refreshing

    /// Moves to the newest committed version; returns whether there was a newer one.
    @discardableResult
    public func refresh() -> Bool { core.refresh() }

    /// Releases the snapshot (cancelling any write). Objects and results read so far become
    /// invalidated; the Realm stays usable and reads the newest version next.
    public func invalidate() { core.invalidate() }
}

extension Realm: Equatable {
    /// Two `Realm` values are equal when they are the same instance.
    public static func == (lhs: Realm, rhs: Realm) -> Bool { lhs.core === rhs.core }
}

extension Realm {
    /// What `add` and `create` do with an object whose primary key already exists.
    public enum UpdatePolicy: Int, Sendable {
        /// Trap: an object with this primary key already exists.
        case error = 1
        /// Overwrite every property of the existing object.
        case all = 2
        /// Overwrite only the properties whose values changed.
        case modified = 3
    }
}

/// Opens `RealmCore`s, reusing the instance of the current thread for the same file.
enum RealmOpener {
    struct InstanceKey: Hashable {
        /// The thread, queue or actor the instance is confined to.
        let place: UInt
        let path: String
    }
    /// An open core, not retained: the core removes its entry when it is deallocated. (A weak
    /// reference would give every core a side table and make each retain of it slow.)
    // @unchecked Sendable: an entry is keyed by its thread and only ever handed back to the
    // thread that opened it, so the non-Sendable core never crosses threads through here.
    private struct OpenCore: @unchecked Sendable { let core: Unmanaged<RealmCore> }
    private static let instances = Mutex<[InstanceKey: OpenCore]>([:])

    static func open(_ configuration: Realm.Configuration, confinement: Confinement = .thread) throws -> RealmCore {
        if configuration.readOnly && configuration.deleteRealmIfMigrationNeeded {
            throwRealmException("Cannot set `deleteRealmIfMigrationNeeded` when `readOnly` is set.")
        }
        let path = configuration.path
        let place: UInt
        switch confinement {
        case .thread, .frozen: place = CurrentThread.identity
        case .queue(let queue): place = queue.trellisIdentity
        case .actor(let actor): place = UInt(bitPattern: ObjectIdentifier(actor).hashValue)
        }
        let key = InstanceKey(place: place, path: path)
        // Taken on the core's own thread, which is the only one that can deallocate it.
        if let existing = instances.withLock({ $0[key]?.core.takeUnretainedValue() }), !existing.isClosed {
            // Trellis's own readers of a file (stored-schema queries, export, inspection) only
            // read, so they may use this thread's writable instance; an app's open may not.
            if existing.configuration.readOnly != configuration.readOnly, !configuration.opensAnySchemaVersion {
                throwRealmException("Realm at path '\(path)' already opened with different read permissions")
            }
            // Realm's check (RealmCoordinator): one key per open file.
            _ = try EncryptionKey.forFile(configuration.encryptionKey, path: path)
            if existing.configuration.encryptionKey != configuration.encryptionKey {
                throw EncryptionKey.mismatched(path)
            }
            try checkSchemaVersion(configuration, file: existing.file)
            if configuration.objectTypes != nil { try SchemaBinder.bind(configuration, file: existing.file) }
            return existing
        }
        try FilePreparation.copySeedIfNeeded(configuration, path: path)
        try checkPath(configuration, path: path)
        try FilePreparation.compactIfAsked(configuration, path: path)
        #if TRELLIS_LMDB
        let existed = FileManager.default.fileExists(atPath: path)
        let core: RealmCore
        do {
            core = try openCore(configuration, path: path, allowDelete: configuration.deleteRealmIfMigrationNeeded,
                                confinement: confinement)
        } catch let error as Realm.Error where error.code == .diskFull && !existed && !FileState.isOpen(path: path) {
            // LMDB makes a new file in place: one the full disk cut short is removed.
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-lock")
            throw error
        }
        #else
        // A failed open removes no file (issue 37): neither the data file nor the lock file may be
        // this open's own by the time it fails. Another process may have made or opened them in
        // the meantime (a removed lock file splits the reader table; a removed data file loses
        // that process's commits). A new file appears whole or not at all (FileCreation.swift), so
        // what a full disk leaves is an empty database or an empty lock file, both reused by the
        // next open.
        let core = try openCore(configuration, path: path, allowDelete: configuration.deleteRealmIfMigrationNeeded,
                                confinement: confinement)
        #endif
        core.instanceKey = key
        instances.withLock { $0[key] = OpenCore(core: Unmanaged.passUnretained(core)) }
        core.registerForAutorefresh()
        return core
    }

    /// Called by a core being deallocated.
    static func forget(_ core: RealmCore, key: InstanceKey) {
        let identity = Unmanaged.passUnretained(core).toOpaque()
        instances.withLock { instances in
            if instances[key]?.core.toOpaque() == identity { instances[key] = nil }
        }
    }

    private static func openCore(_ configuration: Realm.Configuration, path: String, allowDelete: Bool,
                                 confinement: Confinement) throws -> RealmCore
    {
        do {
            let file = try FileState.shared(path: path, configuration: configuration)
            try checkSchemaVersion(configuration, file: file)
            try SchemaBinder.bind(configuration, file: file)
            if !configuration.opensAnySchemaVersion { file.hasBoundSchema.withLock { $0 = true } }
            file.environment.setSyncOnCommit(configuration.syncOnCommit && configuration.inMemoryIdentifier == nil)
            return try RealmCore(configuration: configuration, file: file, confinement: confinement)
        } catch let error as Realm.Error where error.code == .schemaMismatch && allowDelete {
            // The file state went out of scope with the `do` block; delete only if nothing else holds it.
            try deleteFiles(path)
            return try openCore(configuration, path: path, allowDelete: false, confinement: confinement)
        }
    }

    /// Realm's rule for a file already open in the process (realm-core's `RealmCoordinator`):
    /// another open must use the schema version the open Realms use. A migration while Realms
    /// of the file are open would change the layout of the rows they read.
    private static func checkSchemaVersion(_ configuration: Realm.Configuration, file: FileState) throws {
        guard !configuration.opensAnySchemaVersion, file.hasBoundSchema.withLock({ $0 }),
              configuration.schemaVersion != file.catalog.schemaVersion
        else { return }
        throw Realm.Error(.fail, "Realm at path '\(configuration.path)' already opened with different schema version.",
                          fileURL: configuration.path)
    }

    private static func deleteFiles(_ path: String) throws {
        guard let reservation = FileState.reserve(path: path, for: .deletion) else {
            throw Realm.Error(.alreadyOpen, "Cannot delete '\(path)' for deleteRealmIfMigrationNeeded: it is still open "
                + "in this process. Close every Realm of it first.", fileURL: path)
        }
        defer { reservation.end() }
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + "-lock")
    }

    /// The file's header and attributes. The header first, then the size: another process
    /// commits data pages before the header that points at them, so in this order a live file
    /// never looks truncated.
    private static func inspect(_ path: String) -> (FileHeader.Reading, [FileAttributeKey: Any], Int) {
        let reading = FileHeader.inspect(path: path)
        let attributes = (try? FileManager.default.attributesOfItem(atPath: path)) ?? [:]
        return (reading, attributes, attributes[.size] as? Int ?? 0)
    }

    /// Whether a file may be one being created right now. LMDB makes the file, then writes the
    /// first two pages (the meta pages), so another thread or process opening it at the same
    /// moment sees it empty or shorter than its header needs. TrellisStorage makes a new file
    /// whole under another name and then links it into place, so it is never seen half made;
    /// only an empty file it fills in place (under its writer lock) is briefly short.
    private static func mayBeBeingCreated(_ reading: FileHeader.Reading, size: Int) -> Bool {
        if size == 0 { return true }
        #if !TRELLIS_LMDB
        // Its header is whole, its meta slots (up to 3 pages) may still be coming.
        if case .header(let header) = reading { return size < header.requiredSize }
        #endif
        if size >= 2 * Int(getpagesize()) { return false }
        if case .header(let header) = reading, size >= header.requiredSize { return false }
        return true
    }

    /// Problems LMDB would not report, or report only by stopping the process.
    private static func checkExistingFile(_ configuration: Realm.Configuration, path: String) throws {
        var (reading, attributes, size) = inspect(path)
        if mayBeBeingCreated(reading, size: size), FileManager.default.fileExists(atPath: path + "-lock") {
            // Opened by LMDB (it makes the lock file first): another thread or process may be
            // creating it. A thread of this process does that holding the file registry; another
            // process is given a second to write its first pages.
            FileState.waitForOpenings()
            (reading, attributes, size) = inspect(path)
            let deadline = Date().addingTimeInterval(1)
            while mayBeBeingCreated(reading, size: size), Date() < deadline {
                usleep(1000)
                (reading, attributes, size) = inspect(path)
            }
        }
        if size == 0 {
            throw Realm.Error(.notATrellisFile, "'\(path)' is an empty file, not a Trellis database. Delete it to "
                + "create a new database there.", fileURL: path)
        }
        #if !TRELLIS_LMDB
        // A writable open converts it (Environment.shared); a read-only one cannot.
        if case .lmdbFormat = reading, configuration.readOnly { throw LegacyFileFormat.upgradeRequired(path) }
        #endif
        if case .foreign = reading, mayBeBeingCreated(reading, size: size) {
            // Realm's answer (and code) for a file too short to hold a database's first pages.
            throw Realm.Error(.invalidDatabase, "Failed to open Realm file at path '\(path)': file is non-empty but "
                + "too small (\(size) bytes) to be a valid Realm.", fileURL: path)
        }
        if case .damaged(let reason) = reading {
            throw Realm.Error(.corruptFile, "'\(path)' is damaged: \(reason). Restore it from a backup.", fileURL: path)
        }
        if case .header(let header) = reading, size < header.requiredSize {
            throw Realm.Error(.corruptFile, "'\(path)' is truncated: its last commit needs \(header.requiredSize) bytes "
                + "but the file has \(size). Restore it from a backup.", fileURL: path)
        }
        // Checked by mode rather than by trying: a process running as root could write anyway.
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o444 == 0 {
            throw Realm.Error(.filePermissionDenied, "Failed to open Realm file at path '\(path)': Permission denied. "
                + "Please use a path where your app has read-write permissions.", fileURL: path)
        }
        if !configuration.readOnly, let mode = attributes[.posixPermissions] as? Int, mode & 0o222 == 0 {
            throw Realm.Error(.filePermissionDenied, "Failed to open Realm file at path '\(path)': Permission denied "
                + "(the file is read-only, mode \(String(mode, radix: 8))). Open it with readOnly: true, or make it "
                + "writable (chmod u+w).", fileURL: path)
        }
    }

    private static func checkPath(_ configuration: Realm.Configuration, path: String) throws {
        _ = try EncryptionKey.forFile(configuration.encryptionKey, path: path)
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists, isDirectory.boolValue {
            throw Realm.Error(.fileAccess, "Failed to open Realm file at path '\(path)': it is a directory, not a "
                + "database file. Point fileURL at a file inside it, such as '\(path)/default.realm'.", fileURL: path)
        }
        let folder = (path as NSString).deletingLastPathComponent
        var folderIsDirectory: ObjCBool = false
        if !exists, FileManager.default.fileExists(atPath: folder, isDirectory: &folderIsDirectory),
           !folderIsDirectory.boolValue
        {
            // Realm's code and words: Realm opens its lock file, `<path>.lock`, first, and names it.
            let lockPath = path + ".lock"
            throw Realm.Error(.fileOperationFailed, "Failed to open file at path '\(lockPath)': parent path is not a "
                + "directory", fileURL: lockPath)
        }
        if exists, let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType,
           type != .typeRegular, type != .typeSymbolicLink
        {
            throw Realm.Error(.fileAccess, "Failed to open Realm file at path '\(path)': it is not a regular file "
                + "(\(type.rawValue)). Point fileURL at a regular file.", fileURL: path)
        }
        if exists { try checkExistingFile(configuration, path: path) }
        if !exists, path == Realm.Configuration.defaultFileURL.standardizedFileURL.path,
           !FileManager.default.fileExists(atPath: folder)
        {
            // Realm makes the default file's folder (on Linux `~/.local/share`, often missing).
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        if !exists, !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            throw Realm.Error(.fileNotFound, "The folder of '\(path)' does not exist. Create '\(folder)' first.",
                              fileURL: path)
        }
        if !exists, configuration.readOnly {
            // Realm's words: a read-only Realm needs an existing file.
            throw Realm.Error(.fileNotFound, "Failed to open Realm file at path '\(path)': No such file or directory",
                              fileURL: path)
        }
    }
}
