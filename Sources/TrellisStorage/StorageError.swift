/// An error of the storage engine: what failed, where, and how to fix it.
///
/// Match on `code`; `message` is for people.
public struct StorageError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure this is.
    public enum Code: Sendable, Equatable {
        /// A page failed its checksum or holds an impossible structure. The page is named.
        case corruptFile(page: UInt64)
        /// A system call failed (`operation` is its name, `errno` its error number).
        case io(operation: String, errno: Int32)
        /// The file is not a TrellisStorage file, or is of a format version this build does not read.
        case incompatibleFile
        /// A key is empty or longer than `StorageLimits.maximumKeyLength`, or a value too long.
        case keyTooLarge
        /// A key has the wrong width for an integer-ordered tree.
        case badIntegerKey
        /// No tree of that name exists.
        case treeNotFound(String)
        /// `put(..., mode: .noOverwrite)` found the key, or `.append` got a key not after the last.
        case keyExists
        /// Every reader slot of the lock file is taken by a live process.
        case readersFull
        /// The transaction was used after it ended, or a read-only transaction was asked to write.
        case invalidUse
        /// `compact()` found read transactions that still see the pages it would move or cut off.
        case compactionBlocked
        /// The encryption key does not open the file (wrong key, or a damaged header), or is not
        /// 64 bytes long.
        case wrongEncryptionKey
        /// The file is encrypted and no key was given.
        case encryptionKeyRequired
        /// A key was given for a file that is not encrypted.
        case fileNotEncrypted
    }

    /// What kind of failure this is.
    public let code: Code
    /// What failed, where, and what to do about it.
    public let message: String

    /// Makes an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func corrupt(page: UInt64, _ detail: String) -> StorageError {
        StorageError(.corruptFile(page: page),
                     "TrellisStorage: page \(page) of the file is damaged (\(detail)). Restore the file from a backup.")
    }

    static func io(_ operation: String, path: String, errno: Int32) -> StorageError {
        StorageError(.io(operation: operation, errno: errno),
                     "TrellisStorage: \(operation) failed on '\(path)': \(Platform.describe(errorNumber: errno)) "
                         + "(errno \(errno)). The transaction was abandoned; the file is at its last commit.")
    }

    static func misuse(_ detail: String) -> StorageError {
        StorageError(.invalidUse, "TrellisStorage: \(detail)")
    }
}
