// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

/// A failure reported by the storage engine (TrellisStorage), before the Realm layer adds context.
///
/// Internal: the public surface only ever sees ``Realm/Error``, which wraps this with what was
/// being done and how to fix it. The same shape as the LMDB build's, so the layers above see
/// one type: a `kind` to decide on, an errno-style `code`, the operation and the engine's text.
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
    /// The errno of a failed system call (0 when the engine found the problem itself).
    let code: Int32
    /// What the engine was doing ("opening the environment", "committing").
    let operation: String
    /// What exactly is wrong: the engine's message, or Trellis's own finding.
    let detail: String?

    /// An error of a system call, classified by its errno.
    init(code: Int32, operation: String, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.detail = detail
        kind = Self.kind(ofErrno: code)
    }

    init(kind: Kind, operation: String, detail: String?) {
        self.kind = kind
        self.code = 0
        self.operation = operation
        self.detail = detail
    }

    /// The engine's error, classified.
    init(_ error: TrellisStorage.StorageError, operation: String) {
        self.operation = operation
        detail = error.message
        switch error.code {
        case .corruptFile:
            kind = .corrupted
            code = EIO
        case .io(_, let number):
            kind = Self.kind(ofErrno: number)
            code = number
        case .incompatibleFile:
            kind = .invalidFile
            code = 0
        case .readersFull:
            kind = .readersFull
            code = 0
        case .keyTooLarge, .badIntegerKey, .treeNotFound, .keyExists, .invalidUse, .compactionBlocked:
            kind = .other
            code = EINVAL
        }
    }

    /// Any error thrown while `operation` ran, as a storage error.
    static func wrapping(_ error: any Error, operation: String) -> StorageError {
        if let storage = error as? StorageError { return storage }
        if let engine = error as? TrellisStorage.StorageError { return StorageError(engine, operation: operation) }
        return StorageError(kind: .other, operation: operation, detail: "\(error)")
    }

    private static func kind(ofErrno code: Int32) -> Kind {
        switch code {
        case EACCES, EPERM: .permissionDenied
        case ENOENT: .fileNotFound
        case EROFS: .readOnlyFileSystem
        case EBUSY, EAGAIN: .busy
        case ENOSPC, EDQUOT: .diskFull
        default: .other
        }
    }

    /// What went wrong, in words.
    var reason: String { detail ?? String(cString: strerror(code)) }

    var description: String { "\(operation) failed: \(reason) (code \(code))" }
}
#endif
