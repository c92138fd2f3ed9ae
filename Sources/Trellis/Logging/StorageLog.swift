import Foundation
import Synchronization

/// Realm's storage log lines: every message of a database file is prefixed as realm-core's
/// `DB` logger prefixes it, `"DB: <file id> Thread <thread id>: <message>"`, so a log filter
/// or test written for Realm (`logs.contains("Details DB:")`) finds the same lines: "Open file"
/// and "DB closed" at `.detail`, and at `.trace` the transactions' "Start read|write|frozen",
/// "End transaction", the write lock's "acquire writemutex" / "writemutex acquired" /
/// "writemutex released" and "Committing version … to disk".
enum StorageLog {
    private static let ids = Atomic<Int>(0)

    /// A new number naming a file or a transaction in the log.
    static func nextId() -> Int { ids.add(1, ordering: .relaxed).newValue }

    /// Logs `message` about the file `fileId`; built only when some category wants `level`.
    static func log(_ level: LogLevel, _ category: any LogCategory, file fileId: Int,
                    _ message: @autoclosure () -> String)
    {
        Logger.log(level, category, "DB: \(fileId) Thread \(threadId): \(message())")
    }

    /// Logs the start of a read transaction at `version` at `.trace`, as realm-core words it:
    /// "Start read <transaction id>: <version>" ("Start frozen …" for a frozen Realm's).
    static func readStarted(file fileId: Int, version: Int, frozen: Bool = false) {
        log(.trace, Category.Storage.transaction, file: fileId,
            "Start \(frozen ? "frozen" : "read") \(nextId()): \(version)")
    }

    private static var threadId: UInt { CurrentThread.identity }
}
