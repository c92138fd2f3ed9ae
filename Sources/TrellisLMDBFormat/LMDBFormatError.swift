/// An error of reading or upgrading a file written by a Trellis version that stored data in
/// LMDB: what failed, where, and how to fix it.
///
/// Match on `code`; `message` is for people. Errors of the new file itself are the engine's
/// `StorageError`.
public struct LMDBFormatError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure this is.
    public enum Code: Sendable, Equatable {
        /// The file is not an LMDB file (nor a TrellisStorage file, where that is asked).
        case notLMDBFile
        /// A page of the LMDB file holds an impossible structure (a length, page number, flag,
        /// key order or count that cannot be). The page is named (0 or 1: a meta page).
        case damagedFile(page: UInt64)
        /// A database of the file uses something the conversion does not carry over (sorted
        /// duplicates, reversed keys, a name or key the new format cannot hold). It is named.
        case unsupportedDatabase(name: String)
        /// Another process has the LMDB file open.
        case fileInUse
        /// A system call failed (`operation` is its name, `errno` its error number).
        case io(operation: String, errno: Int32)
        /// The converted file does not hold what the LMDB file holds (the tree is named).
        case verificationFailed(tree: String)
        /// The files beside the database are in a state no conversion leaves (the backup is
        /// there without the database, or the database is neither format).
        case unexpectedFiles
        /// A read-only open met an LMDB-format file: `trellis upgrade FILE` converts it.
        case upgradeRequired
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

    static func damaged(_ path: String, page: UInt64, _ detail: String) -> LMDBFormatError {
        LMDBFormatError(.damagedFile(page: page),
                        "The LMDB-format Trellis file '\(path)' is damaged at page \(page) (\(detail)); nothing was "
                            + "converted. Restore the file from a backup.")
    }

    static func io(_ operation: String, path: String, errno: Int32) -> LMDBFormatError {
        LMDBFormatError(.io(operation: operation, errno: errno),
                        "\(operation) failed on '\(path)': \(UpgradePlatform.describe(errorNumber: errno)) (errno \(errno)).")
    }

    /// The error a read-only open of an LMDB-format file gives: the file must be converted by a
    /// writable open or by `trellis upgrade`, which the message names.
    public static func upgradeRequired(path: String) -> LMDBFormatError {
        LMDBFormatError(.upgradeRequired,
                        "The file '\(path)' was written by an earlier Trellis version (LMDB format) and must be "
                            + "converted before a read-only open: run `trellis upgrade \(path)`, or open it once "
                            + "writable (the first writable open converts it).")
    }
}
