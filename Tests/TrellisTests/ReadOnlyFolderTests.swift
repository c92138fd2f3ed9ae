// TrellisStorage build only: the refusal of an unwritable lock file and the reader table of its
// own are this build's (docs/STORAGE.md section 6); the LMDB build keeps LMDB's own handling.
#if !TRELLIS_LMDB
import Foundation
import Testing
@testable import Trellis

/// Opening a database in a folder the opening process cannot write (Realm: `readOnly: true`
/// works there; a writable open fails with a typed error naming the path and the fix).
///
/// File modes do not stop root, so as root the opens run in a helper process that drops to the
/// user `nobody` first (`TrellisProcessHelper as-user nobody …`); as any other user the helper
/// runs as that user and the folder's mode is enough.
@Suite(.enabled(if: UnprivilegedOpener.arguments != nil, Comment(rawValue: UnprivilegedOpener.whyNot)))
struct ReadOnlyFolderTests {
    let folder = TemporaryFolder()

    /// A folder of mode 555 holding a database of `count` ProcessDogs, made by this process;
    /// `keepLockFile`: the writer's lock file stays beside it (else it is removed, as for a
    /// database shipped read-only).
    func readOnlyFolder(count: Int, keepLockFile: Bool) throws -> (folder: URL, database: String) {
        let readOnly = folder.url.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
        let database = readOnly.appendingPathComponent("shipped.realm").path
        #expect(try runHelper(["write", database, "\(count)"]) == "wrote \(count)")
        if !keepLockFile { try FileManager.default.removeItem(atPath: database + "-lock") }
        #expect(chmod(readOnly.path, 0o555) == 0)
        return (readOnly, database)
    }

    /// Runs the helper as the unprivileged opener: exit status, standard output, standard error.
    func open(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = (UnprivilegedOpener.arguments ?? []) + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus,
                String(decoding: outputData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                String(decoding: errorData, as: UTF8.self))
    }

    func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test func aReadOnlyOpenReadsADatabaseInAFolderItCannotWrite() throws {
        let (readOnly, database) = try readOnlyFolder(count: 3, keepLockFile: false)
        defer { chmod(readOnly.path, 0o755) }
        let before = names(in: readOnly)
        let result = try open(["count-read-only", database])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == "3")
        // No lock file could be made: the open read through a reader table of its own.
        #expect(names(in: readOnly) == before)
    }

    @Test func aWritableOpenInAFolderItCannotWriteIsPermissionDeniedNamingThePathAndTheFix() throws {
        let (readOnly, database) = try readOnlyFolder(count: 1, keepLockFile: false)
        defer { chmod(readOnly.path, 0o755) }
        let before = names(in: readOnly)
        let newDatabase = readOnly.appendingPathComponent("new.realm").path
        for path in [database, newDatabase] {
            let result = try open(["write", path, "1"])
            #expect(result.status == 1)
            #expect(result.error.contains("Failed to open Realm file at path '\(path)': Permission denied"),
                    "\(result.error)")
            #expect(result.error.contains("read-write permissions") && result.error.contains("readOnly: true"),
                    "\(result.error)")
        }
        #expect(names(in: readOnly) == before)
        chmod(readOnly.path, 0o755)
        #expect(try runHelper(["count", database]) == "1")
    }

    @Test func aReadOnlyOpenWhoseLockFileItCannotWriteIsPermissionDeniedNamingTheLockFile() throws {
        // Another user's writer may be committing: a reader that cannot record its snapshot in the
        // lock file could read pages that writer reuses, so it is refused (LMDB's rule), with the fix.
        let (readOnly, database) = try readOnlyFolder(count: 2, keepLockFile: true)
        defer { chmod(readOnly.path, 0o755) }
        let result = try open(["count-read-only", database])
        #expect(result.status == 1)
        #expect(result.error.contains("'\(database)-lock'"), "\(result.error)")
        #expect(result.error.contains("chmod"), "\(result.error)")
    }
}

/// Who opens in ReadOnlyFolderTests: a user who cannot write a folder of mode 555 made by this
/// process.
enum UnprivilegedOpener {
    /// The helper arguments that run a command as that user (`as-user nobody` as root, none
    /// otherwise); nil when there is no such user here (see ``whyNot``).
    static let arguments: [String]? = {
        if getuid() == 0 { return getpwnam("nobody") == nil ? nil : ["as-user", "nobody"] }
        let probe = TemporaryFolder()
        chmod(probe.url.path, 0o555)
        defer { chmod(probe.url.path, 0o755) }
        let made = FileManager.default.createFile(atPath: probe.file("probe").path, contents: nil)
        return made ? nil : []
    }()

    static let whyNot = getuid() == 0
        ? "running as root and there is no user 'nobody' to drop to (root writes any folder)"
        : "a folder of mode 555 is still writable here (the file system ignores modes)"
}
#endif
