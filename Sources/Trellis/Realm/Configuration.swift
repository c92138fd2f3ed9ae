import Foundation
import Synchronization

extension Realm {
    /// Where and how a Realm is opened, with Realm Swift's names and defaults.
    ///
    /// ```swift
    /// let config = Realm.Configuration(fileURL: url, objectTypes: [Person.self, Dog.self])
    /// let realm = try Realm(configuration: config)
    /// ```
    public struct Configuration: @unchecked Sendable {
        // @unchecked Sendable: every stored property is a value type or an immutable class
        // metatype (`objectTypes`), which is safe to share.

        /// The configuration `Realm()` uses. Setting it affects later opens only.
        public static var defaultConfiguration: Configuration {
            get { defaultStorage.withLock { $0 } }
            set { defaultStorage.withLock { $0 = newValue } }
        }
        private static let defaultStorage = Mutex(Configuration())

        /// `default.realm` in the user's application-support folder (`~/.local/share` on Linux).
        public static var defaultFileURL: URL {
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            return base.appendingPathComponent("default.realm")
        }

        /// The database file. Setting it clears ``inMemoryIdentifier``.
        public var fileURL: URL? {
            didSet { if fileURL != nil { inMemoryIdentifier = nil } }
        }

        /// A name for a Realm that lives only as long as it is open (in a temporary file that is
        /// never synced to disk). Setting it clears ``fileURL``.
        public var inMemoryIdentifier: String? {
            didSet { if inMemoryIdentifier != nil { fileURL = nil } }
        }

        /// The 64-byte key the file is encrypted with (AES-256-GCM pages; docs/STORAGE.md,
        /// section 12), or nil for a plain file. A key of another length traps when the file is
        /// opened, as in Realm. Encryption needs the TrellisStorage build (the
        /// default); the LMDB build (`TRELLIS_STORAGE_ENGINE=lmdb`) throws `.fail` for a key.
        public var encryptionKey: Data?

        /// Open the file for reading only: writes trap, and the file must exist.
        public var readOnly: Bool

        /// The version of the models. A file with a different schema needs a higher version and a
        /// migration (or ``deleteRealmIfMigrationNeeded``).
        public var schemaVersion: UInt64

        /// Run when the file's schema version is lower than ``schemaVersion``: moves data from
        /// the old schema to the new one (see ``MigrationBlock``).
        public var migrationBlock: MigrationBlock?

        /// Delete the file and start empty when the models no longer match it.
        public var deleteRealmIfMigrationNeeded: Bool

        /// The model classes of this Realm. When nil, classes are registered as they are first
        /// used (`objects(T.self)`, `add`), with the classes they link to.
        ///
        /// A class listed more than once is kept once, as in Realm (which keys its schema by
        /// class name): `[Dog.self, Dog.self]` reads back as `[Dog.self]`.
        public var objectTypes: [ObjectBase.Type]? {
            didSet { objectTypes = objectTypes.map(Configuration.withoutRepeats) }
        }

        /// `types` in their order, each class once.
        static func withoutRepeats(_ types: [ObjectBase.Type]) -> [ObjectBase.Type] {
            var seen = Set<ObjectIdentifier>()
            return types.filter { seen.insert(ObjectIdentifier($0)).inserted }
        }

        /// The largest size the file may grow to, or nil (the default) for no limit but the
        /// disk's. A write past it fails with ``Realm/Error/Code/fileSizeLimitReached`` and
        /// changes nothing.
        ///
        /// The file is memory-mapped: the map starts by reserving 64 GiB of address space (not
        /// disk; the file itself grows page by page) and doubles when a Realm opens the file or
        /// begins a write while it is more than half full and no other `Realm` of the process
        /// holds this file open.
        public var maximumFileSize: Int?

        /// The address space the map reserves at first; tests make it small to watch it grow.
        var initialMapSize: Int = 64 << 30

        /// log2 of the objects per chunk of the column copies of a new (or upgraded) file;
        /// tests make chunks small, so that they fill, empty and split across many keys.
        var columnChunkShift: Int = SchemaCatalog.defaultColumnShift

        /// Opens the file at whatever schema version it has, never migrating: for tools that
        /// read and write by the stored schema (no model classes), such as the `trellis` commands.
        var opensAnySchemaVersion = false

        /// The configuration of a tool that works by the file's stored schema: no model classes,
        /// any schema version, nothing migrated; `encryptionKey` for an encrypted file.
        static func storedSchema(fileURL: URL, readOnly: Bool, encryptionKey: Data? = nil) -> Configuration {
            var configuration = Configuration(fileURL: fileURL, readOnly: readOnly)
            configuration.opensAnySchemaVersion = true
            configuration.encryptionKey = encryptionKey
            return configuration
        }

        /// Whether a commit returns only after the data is on disk (fsync). On by default; turn
        /// off for throughput when losing the last commits after a power loss is acceptable
        /// (an application crash still loses nothing).
        public var syncOnCommit: Bool = true

        /// Whether the first open of the file in this process checks its structure (every
        /// B-tree page the newest commit reaches) before using it. On by default: a damaged file
        /// then fails to open with ``Realm/Error/Code/corruptFile`` instead of stopping the
        /// process inside LMDB. The check reads the used part of the file once (see
        /// docs/RELIABILITY.md for its cost); turn it off for very large files you trust.
        public var verifiesFileOnOpen: Bool = true

        /// Decides, when the file is first opened by a process while no other process has it
        /// open, whether to compact it: called with the file's size and the bytes its data uses;
        /// return true to rewrite it without its free space. Realm's `shouldCompactOnLaunch`.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?

        /// A file copied to ``fileURL`` when no file is there yet (a bundled seed database).
        public var seedFilePath: URL?

        /// The most versions the file may keep alive when a write begins, or nil (or 0) for no
        /// limit, as in Realm.
        ///
        /// A snapshot a Realm, frozen object or thread keeps open pins its version, and every
        /// version committed since then keeps the pages it replaced: a long-lived frozen object
        /// or a thread that never refreshes, while others keep writing, makes the file grow.
        /// With a limit, beginning a write when more versions than that are alive (from the
        /// oldest snapshot any process holds to the last commit) stops with Realm's message
        /// "Number of active versions (N) in the Realm exceeded the limit of M"; use a low value
        /// during development to find the place that holds an old version.
        public var maximumNumberOfActiveVersions: UInt?

        /// The TrellisSync client of a synced Realm (set by `User.flexibleSyncConfiguration`);
        /// nil for a local Realm. See ``SyncCommitHook``.
        package var syncHook: (any SyncCommitHook)?

        /// A configuration with Realm's parameters; `inMemoryIdentifier` wins over `fileURL`.
        public init(fileURL: URL? = Configuration.defaultFileURL, inMemoryIdentifier: String? = nil,
                    encryptionKey: Data? = nil, readOnly: Bool = false, schemaVersion: UInt64 = 0,
                    migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
                    shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil,
                    objectTypes: [ObjectBase.Type]? = nil, seedFilePath: URL? = nil)
        {
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.seedFilePath = seedFilePath
            self.migrationBlock = migrationBlock
            self.fileURL = inMemoryIdentifier == nil ? fileURL : nil
            self.inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.objectTypes = objectTypes.map(Configuration.withoutRepeats)
        }

        /// The path of the file this configuration opens.
        var path: String {
            if let inMemoryIdentifier {
                let safe = inMemoryIdentifier.map { $0.isLetter || $0.isNumber ? $0 : "_" }
                return NSTemporaryDirectory() + "trellis-memory-\(getpid())-\(String(safe))"
            }
            return (fileURL ?? Configuration.defaultFileURL).standardizedFileURL.path
        }
    }
}
