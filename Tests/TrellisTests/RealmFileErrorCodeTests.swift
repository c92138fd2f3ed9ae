import Foundation
import Testing
@testable import Trellis

/// Realm's codes and messages for files that cannot be opened (its RealmTests:
/// testOpeningInvalidPathThrows, testCatchSpecificErrors, testReadOnlyRealmMustExist,
/// testFilePermissionDenied, testInitFailable; MigrationTests.testSchemaVersionAtURL). Realm's
/// tests compare codes with `==` and the whole message.
@Suite struct RealmFileErrorCodeTests {
    let folder = TemporaryFolder()

    func openError(_ url: URL, readOnly: Bool = false) -> Realm.Error? {
        do {
            _ = try Realm(configuration: .init(fileURL: url, readOnly: readOnly, objectTypes: [Dog.self]))
            return nil
        } catch {
            return error as? Realm.Error
        }
    }

    @Test func aPathUnderAFileIsFileOperationFailedWithRealmsMessage() {
        let url = URL(fileURLWithPath: "/dev/null/foo")
        let error = openError(url)
        #expect(error?.code == .fileOperationFailed)
        // Realm opens `<path>.lock` first: the message and the error's fileURL name it.
        #expect(error?.localizedDescription
            == "Failed to open file at path '/dev/null/foo.lock': parent path is not a directory")
        #expect(error?.fileURL == url.appendingPathExtension("lock"))
        do {
            _ = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            Issue.record("opened a path under /dev/null")
        } catch Realm.Error.fileOperationFailed {
            // Realm's testCatchSpecificErrors
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func schemaVersionOfAFileThatDoesNotExistIsInvalidDatabaseWithRealmsMessage() {
        let url = folder.file("never.realm")
        do {
            _ = try schemaVersionAtURL(url)
            Issue.record("no error")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidDatabase)
            #expect(error.localizedDescription == "Realm at path '\(url.path)' has not been initialized.")
            #expect(error.fileURL == url)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func schemaVersionOfDevNullIsAFileAccessError() {
        do {
            _ = try schemaVersionAtURL(URL(fileURLWithPath: "/dev/null"))
            Issue.record("no error")
        } catch Realm.Error.filePermissionDenied {
        } catch Realm.Error.fileAccess {
        } catch {
            Issue.record("expected .filePermissionDenied or .fileAccess, got \(error)")
        }
    }

    @Test func aOneByteFileIsInvalidDatabaseWithRealmsMessage() throws {
        let url = folder.file("a.realm")
        try Data("a".utf8).write(to: url)
        let error = openError(url)
        #expect(error?.code == .invalidDatabase)
        #expect(error?.localizedDescription
            == "Failed to open Realm file at path '\(url.path)': file is non-empty but too small (1 bytes) to be a valid Realm.")
        #expect(try Data(contentsOf: url) == Data("a".utf8))
    }

    @Test func aReadOnlyRealmThatDoesNotExistIsFileNotFoundWithRealmsMessage() {
        let url = folder.file("missing.realm")
        let error = openError(url, readOnly: true)
        #expect(error?.code == .fileNotFound)
        #expect(error?.localizedDescription == "Failed to open Realm file at path '\(url.path)': No such file or directory")
        #expect(error?.fileURL == url)
    }

    @Test func anUnreadableFileIsPermissionDeniedWithRealmsMessage() throws {
        let url = folder.file("locked.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path) }
        let error = try onOtherThread { openError(url) }
        #expect(error?.code == .filePermissionDenied)
        #expect(error?.localizedDescription == "Failed to open Realm file at path '\(url.path)': Permission denied. "
            + "Please use a path where your app has read-write permissions.")
    }

    /// Whether this process may mark files immutable (`chattr +i` needs CAP_LINUX_IMMUTABLE: root).
    static let canMarkImmutable = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr")

    static func chattr(_ flag: String, _ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "chattr \(flag) \(path)")
    }

    /// Realm's RealmTests.testReadOnlyFile (its `FileAttributeKey.immutable` is `chattr +i` on
    /// Linux): an immutable file cannot be opened read-write, with Realm's code and message
    /// (the system's text for EPERM), and opens read-only. Before, Trellis's message said
    /// "Permission denied (…)" and added its own advice.
    @Test(.enabled(if: canMarkImmutable)) func anImmutableFileIsPermissionDeniedReadWriteAndOpensReadOnly() throws {
        let url = folder.file("immutable.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog()) }
        }
        try Self.chattr("+i", url.path)
        defer { try? Self.chattr("-i", url.path) }
        let error = try onOtherThread { openError(url) }
        #expect(error?.code == .filePermissionDenied)
        #expect(error?.localizedDescription == "Failed to open Realm file at path '\(url.path)': Operation not permitted. "
            + "Please use a path where your app has read-write permissions.")
        #expect(error?.fileURL == url)
        let count = try onOtherThread {
            try Realm(configuration: .init(fileURL: url, readOnly: true, objectTypes: [Dog.self])).objects(Dog.self).count
        }
        #expect(count == 1)
    }

    @Test func otherOpeningErrorsBeginAsRealmsDo() throws {
        let url = folder.file("noise.realm")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<16384).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
        let noise = openError(url)
        #expect(noise?.message.hasPrefix("Failed to open Realm file at path '\(url.path)': ") == true, "\(String(describing: noise))")
        let directory = openError(folder.url)
        #expect(directory?.message.hasPrefix("Failed to open Realm file at path '\(folder.url.path)': ") == true)
    }
}
