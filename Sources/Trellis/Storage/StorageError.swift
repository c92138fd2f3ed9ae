import Foundation

/// A failure reported by the storage engine (LMDB or TrellisStorage, as built: see Package.swift),
/// before the Realm layer adds context.
///
/// Internal: the public surface only ever sees ``Realm/Error``, which wraps this with what was
/// being done and how to fix it. One type for both builds, so the layers above see a `kind` to
/// decide on, an errno-style `code`, the operation and the engine's text. Each build adds how it
/// classifies its engine's codes and words them (`LMDB/LMDBStorageError.swift`,
/// `Engine/EngineStorageError.swift`).
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
        /// The encryption key does not open the file, is missing, or was given for a plain file,
        /// or differs from the key of this process's open environment of the file (TrellisStorage
        /// build only: LMDB does not encrypt).
        case decryptionFailed
        /// A read-only open whose lock file exists but this process cannot write (another user's
        /// database): it cannot record the version it reads (TrellisStorage build only).
        case lockFileNotWritable
        case other
    }

    let kind: Kind
    /// The errno of a failed system call, or LMDB's own code in the LMDB build (0 when the engine
    /// found the problem itself).
    let code: Int32
    /// What the engine was doing ("opening the environment", "committing").
    let operation: String
    /// What exactly is wrong: the engine's message, or Trellis's own finding.
    let detail: String?

    init(kind: Kind, code: Int32 = 0, operation: String, detail: String?) {
        self.kind = kind
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// How an errno reads as a kind (both engines report system calls' failures this way).
    static func kind(ofErrno code: Int32) -> Kind {
        switch code {
        case EACCES, EPERM: .permissionDenied
        case ENOENT: .fileNotFound
        case EROFS: .readOnlyFileSystem
        case EBUSY, EAGAIN: .busy
        case ENOSPC, EDQUOT: .diskFull
        // TrellisStorage's answer to a commit past `maximumFileSize` (and the system's to a file
        // past its size limit).
        case EFBIG: .mapFull
        default: .other
        }
    }

    var description: String { "\(operation) failed: \(reason) (code \(code))" }
}
