// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import TrellisStorage

/// TrellisStorage's errors as ``StorageError`` (the type is shared: Storage/StorageError.swift).
extension StorageError {
    /// An error of a system call, classified by its errno.
    init(code: Int32, operation: String, detail: String? = nil) {
        self.init(kind: Self.kind(ofErrno: code), code: code, operation: operation, detail: detail)
    }

    /// The engine's error, classified.
    init(_ error: TrellisStorage.StorageError, operation: String) {
        let kind: Kind
        let code: Int32
        switch error.code {
        case .corruptFile:
            (kind, code) = (.corrupted, EIO)
        case .io(_, let number):
            (kind, code) = (Self.kind(ofErrno: number), number)
        case .incompatibleFile:
            (kind, code) = (.invalidFile, 0)
        case .readersFull:
            (kind, code) = (.readersFull, 0)
        case .wrongEncryptionKey, .encryptionKeyRequired, .fileNotEncrypted:
            (kind, code) = (.decryptionFailed, 0)
        case .keyTooLarge, .badIntegerKey, .treeNotFound, .keyExists, .invalidUse, .compactionBlocked:
            (kind, code) = (.other, EINVAL)
        }
        self.init(kind: kind, code: code, operation: operation, detail: error.message)
    }

    /// A second open of `path` in this process with another key than the open environment's.
    static func mismatchedKey(_ path: String) -> StorageError {
        StorageError(kind: .decryptionFailed, operation: "opening '\(path)'",
                     detail: "Realm at path '\(path)' already opened with different encryption key")
    }

    /// Any error thrown while `operation` ran, as a storage error.
    static func wrapping(_ error: any Error, operation: String) -> StorageError {
        if let storage = error as? StorageError { return storage }
        if let engine = error as? TrellisStorage.StorageError { return StorageError(engine, operation: operation) }
        return StorageError(kind: .other, operation: operation, detail: "\(error)")
    }

    /// What went wrong, in words.
    var reason: String { detail ?? String(cString: strerror(code)) }
}
#endif
