import Foundation
extension Realm {
    /// Every recoverable Trellis failure: file access, bad or foreign files, schema problems,
    /// duplicate primary keys, bad values.
    ///
    /// Match on the code:
    /// ```swift
    /// do {
    ///     let realm = try Realm(configuration: config)
    /// } catch let error as Realm.Error where error.code == .schemaMismatch {
    ///     print(error.message)
    /// }
    /// ```
    /// or with a pattern: `catch Realm.Error.Code.schemaMismatch { … }`.
    ///
    /// Messages say what failed, on which file, class or property, and how to fix it.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public let code: Code
        /// A sentence that says what failed and how to fix it.
        public let message: String
        /// The path of the file concerned, when there is one.
        public let filePath: String?

        /// The file concerned, when there is one (Realm's `Realm.Error.fileURL`).
        public var fileURL: URL? { filePath.map { URL(fileURLWithPath: $0) } }

        init(_ code: Code, _ message: String, fileURL: String? = nil) {
            self.code = code
            self.message = message
            self.filePath = fileURL
        }

        /// An error raised by a module of this package (TrellisSync's `.subscriptionFailed`).
        package init(code: Code, message: String) {
            self.init(code, message)
        }

        /// An error of `code`, as Realm's `Realm.Error(_:userInfo:)` makes one (for code that
        /// throws Realm's errors itself): the message is `userInfo`'s `NSLocalizedDescriptionKey`,
        /// the file its `NSFilePathErrorKey`; without a message, Foundation's generic sentence.
        public init(_ code: Code, userInfo: [String: Any] = [:]) {
            let message = userInfo[NSLocalizedDescriptionKey] as? String
                ?? "The operation couldn’t be completed. (\(Self.errorDomain) error \(code.rawValue).)"
            self.init(code, message, fileURL: userInfo[NSFilePathErrorKey] as? String)
        }

        /// ``errorUserInfo``, under the name Realm's errors (Foundation's bridged errors) give it.
        public var userInfo: [String: Any] { errorUserInfo }

        public var description: String { message }
        /// The message, as Foundation's errors spell it.
        public var localizedDescription: String { message }

        /// The kind of a ``Realm/Error``. New codes may be added in later versions.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Kind: String, Sendable {
                case fail, fileAccess, filePermissionDenied, fileExists, fileNotFound, fileLocked, alreadyOpen
                case notATrellisFile, corruptFile, fileFormatUpgradeRequired, addressSpaceExhausted
                case fileSizeLimitReached, diskFull, schemaMismatch, invalidSchema, primaryKeyExists
                case invalidValue, readOnly, invalidQuery, tooManyReaders
                // Realm's codes, some thrown only where Realm throws them, so Realm code naming them compiles.
                case incompatibleLockFile, incompatibleSession, unsupportedFileFormatVersion
                case multipleSyncAgents, subscriptionFailed, fileOperationFailed, invalidDatabase
                case incompatibleHistories, noSubscriptionForWrite
            }
            private let kind: Kind
            private init(_ kind: Kind) { self.kind = kind }

            public var description: String { kind.rawValue }

            /// The code's number: Realm's `RLMError` number where Realm has the same kind of
            /// error (`fail` 1 … `schemaMismatch` 10, `alreadyOpen` 12, `invalidValue` 13 as Realm's
            /// `invalidInput`, `diskFull` 14 as `outOfDiskSpace`, `notATrellisFile` and
            /// `corruptFile` 20 as `invalidDatabase`), 100 and up for Trellis's own.
            public var rawValue: Int {
                switch kind {
                case .fail: 1
                case .fileAccess: 2
                case .filePermissionDenied: 3
                case .fileExists: 4
                case .fileNotFound: 5
                case .fileFormatUpgradeRequired: 6
                case .addressSpaceExhausted: 9
                case .schemaMismatch: 10
                case .alreadyOpen: 12
                case .invalidValue: 13
                case .diskFull: 14
                case .notATrellisFile, .corruptFile, .invalidDatabase: 20
                case .incompatibleLockFile: 8
                case .incompatibleSession: 15
                case .unsupportedFileFormatVersion: 16
                case .multipleSyncAgents: 17
                case .subscriptionFailed: 18
                case .fileOperationFailed: 19
                case .incompatibleHistories: 21
                case .noSubscriptionForWrite: 22
                case .fileLocked: 101
                case .fileSizeLimitReached: 102
                case .invalidSchema: 103
                case .primaryKeyExists: 104
                case .readOnly: 105
                case .invalidQuery: 106
                case .tooManyReaders: 107
                }
            }

            /// Realm's name for ``invalidValue``.
            public static let invalidInput = invalidValue
            /// Realm's name for ``diskFull``.
            public static let outOfDiskSpace = diskFull

            /// An unexpected failure of the storage engine.
            public static let fail = Code(.fail)
            /// The file could not be opened or read (I/O error, a directory, a bad path).
            public static let fileAccess = Code(.fileAccess)
            /// The process may not read or write the file or its folder.
            public static let filePermissionDenied = Code(.filePermissionDenied)
            /// A file already exists where one was to be created.
            public static let fileExists = Code(.fileExists)
            /// The file or its folder does not exist (and may not be created).
            public static let fileNotFound = Code(.fileNotFound)
            /// Another process holds a lock that prevents opening the file.
            public static let fileLocked = Code(.fileLocked)
            /// The operation cannot be done on a file that is open: deleting the files of an open
            /// Realm (``Realm/deleteFiles(for:)``, `deleteRealmIfMigrationNeeded`). Realm's code 12.
            public static let alreadyOpen = Code(.alreadyOpen)
            /// The file exists but is not a Trellis database.
            public static let notATrellisFile = Code(.notATrellisFile)
            /// The file is a Trellis database whose content is damaged.
            public static let corruptFile = Code(.corruptFile)
            /// The file was written by a newer Trellis file format.
            public static let fileFormatUpgradeRequired = Code(.fileFormatUpgradeRequired)
            /// The file could not be mapped into memory.
            public static let addressSpaceExhausted = Code(.addressSpaceExhausted)
            /// A write would grow the file past its configured maximum size.
            public static let fileSizeLimitReached = Code(.fileSizeLimitReached)
            /// The disk is full.
            public static let diskFull = Code(.diskFull)
            /// The models differ from the schema stored in the file.
            public static let schemaMismatch = Code(.schemaMismatch)
            /// The models break a schema rule (for example a non-optional to-one link).
            public static let invalidSchema = Code(.invalidSchema)
            /// An object with the same primary key already exists.
            public static let primaryKeyExists = Code(.primaryKeyExists)
            /// A value could not be parsed or converted.
            public static let invalidValue = Code(.invalidValue)
            /// A write was attempted on a Realm opened read-only.
            public static let readOnly = Code(.readOnly)
            /// Query text that does not parse, or names a property or operation the class does
            /// not have (from ``Results/filter(validating:_:)``).
            public static let invalidQuery = Code(.invalidQuery)
            /// Every reader slot of the file's lock file holds a live snapshot (open Realms and
            /// frozen versions of all processes); slots of dead processes are freed.
            public static let tooManyReaders = Code(.tooManyReaders)

            /// Realm's code 20 for a file that is not a database or is damaged, thrown where Realm
            /// throws it (a file too small to be a database, `schemaVersionAtURL` of a missing
            /// file). As a pattern (`catch Realm.Error.invalidDatabase`) it also matches
            /// ``notATrellisFile`` and ``corruptFile``, Trellis's finer codes 20.
            public static let invalidDatabase = Code(.invalidDatabase)
            /// Realm's code 8 (a lock file another architecture's process made). Never thrown by
            /// Trellis; present so that Realm code naming it compiles.
            public static let incompatibleLockFile = Code(.incompatibleLockFile)
            /// Realm's code 15 (a file opened with another in-memory or sync mode). Never thrown.
            public static let incompatibleSession = Code(.incompatibleSession)
            /// Realm's code 16 (a file format this version cannot read). Trellis throws
            /// ``fileFormatUpgradeRequired`` for a newer file format.
            public static let unsupportedFileFormatVersion = Code(.unsupportedFileFormatVersion)
            /// Realm's code 17 (a synced file open in two processes). Never thrown.
            public static let multipleSyncAgents = Code(.multipleSyncAgents)
            /// Realm's code 18 (a subscription the server refused). Trellis Sync reports it as a
            /// `SyncError`.
            public static let subscriptionFailed = Code(.subscriptionFailed)
            /// Realm's code 19 (a file operation failed without a more specific code): a path
            /// under something that is not a directory (`/dev/null/foo`).
            public static let fileOperationFailed = Code(.fileOperationFailed)
            /// Realm's code 21 (a local file opened as synced or the reverse). Never thrown.
            public static let incompatibleHistories = Code(.incompatibleHistories)
            /// Realm's code 22 (a write to a synced Realm outside its subscriptions). Never thrown.
            public static let noSubscriptionForWrite = Code(.noSubscriptionForWrite)

            /// Lets `catch Realm.Error.Code.schemaMismatch` match a thrown ``Realm/Error``.
            public static func ~= (code: Code, error: any Swift.Error) -> Bool {
                guard let thrown = (error as? Realm.Error)?.code else { return false }
                return thrown == code || (code.kind == .invalidDatabase && thrown.rawValue == 20)
            }
        }
    }
}

/// Stops the program for a misuse of the API (Realm's `RLMException` cases), with a message
/// that says what went wrong and how to fix it. Recoverable problems throw ``Realm/Error``.
func throwRealmException(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}

/// Two errors are equal when their codes, messages and files are (Realm's errors compare as
/// Foundation's errors do: domain, code and user info).
extension Realm.Error: Equatable, Hashable {}

extension Realm.Error {
    /// The error a completion reports when a call produced neither a result nor an error
    /// (Realm's `Realm.Error.callFailed`).
    public static let callFailed = Realm.Error(.fail, userInfo: [NSLocalizedDescriptionKey: "Call failed"])
}

extension Realm.Error: LocalizedError {
    /// The message, so `error.localizedDescription` (what Realm's documentation prints) says
    /// what failed, where and what to do.
    public var errorDescription: String? { message }
}

extension Realm.Error: CustomNSError {
    /// Realm's error domain (`RLMErrorDomain`), so `(error as NSError).domain` reads as in Realm.
    public static var errorDomain: String { "io.realm" }
    /// ``Code/rawValue``.
    public var errorCode: Int { code.rawValue }
    /// The message under `NSLocalizedDescriptionKey` and the path under `NSFilePathErrorKey`,
    /// as Realm's errors carry them.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let filePath { info[NSFilePathErrorKey] = filePath }
        return info
    }
}

extension Realm.Error {
    // Realm's shorthands (`catch Realm.Error.schemaMismatch`), one per code.
    /// ``Code/fail``.
    public static let fail = Code.fail
    /// ``Code/fileAccess``.
    public static let fileAccess = Code.fileAccess
    /// ``Code/filePermissionDenied``.
    public static let filePermissionDenied = Code.filePermissionDenied
    /// ``Code/fileExists``.
    public static let fileExists = Code.fileExists
    /// ``Code/fileNotFound``.
    public static let fileNotFound = Code.fileNotFound
    /// ``Code/fileFormatUpgradeRequired``.
    public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
    /// ``Code/addressSpaceExhausted``.
    public static let addressSpaceExhausted = Code.addressSpaceExhausted
    /// ``Code/schemaMismatch``.
    public static let schemaMismatch = Code.schemaMismatch
    /// ``Code/alreadyOpen``.
    public static let alreadyOpen = Code.alreadyOpen
    /// ``Code/invalidInput``.
    public static let invalidInput = Code.invalidValue
    /// ``Code/outOfDiskSpace``.
    public static let outOfDiskSpace = Code.diskFull
    /// ``Code/invalidDatabase``: matches ``Code/notATrellisFile`` and ``Code/corruptFile``.
    public static let invalidDatabase = Code.invalidDatabase
    /// ``Code/incompatibleLockFile``.
    public static let incompatibleLockFile = Code.incompatibleLockFile
    /// ``Code/incompatibleSession``.
    public static let incompatibleSession = Code.incompatibleSession
    /// ``Code/unsupportedFileFormatVersion``.
    public static let unsupportedFileFormatVersion = Code.unsupportedFileFormatVersion
    /// ``Code/multipleSyncAgents``.
    public static let multipleSyncAgents = Code.multipleSyncAgents
    /// ``Code/subscriptionFailed``.
    public static let subscriptionFailed = Code.subscriptionFailed
    /// ``Code/fileOperationFailed``.
    public static let fileOperationFailed = Code.fileOperationFailed
    /// ``Code/incompatibleHistories``.
    public static let incompatibleHistories = Code.incompatibleHistories
    /// ``Code/noSubscriptionForWrite``.
    public static let noSubscriptionForWrite = Code.noSubscriptionForWrite
}
