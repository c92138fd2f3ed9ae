import Foundation
import Testing
@testable import Trellis

/// `Realm.deleteFiles(for:)` refuses a file another process has open, as Realm does ("Cannot
/// delete files of an open Realm"): deleting it under a live process would leave that process
/// writing to a file nobody else can open, and the next open would start an empty one.
@Suite struct DeleteFilesProcessTests {
    let folder = TemporaryFolder()

    @Test func deleteFilesRefusesAFileAnotherProcessHasOpen() throws {
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let holder = try startHoldingReaders(folder.file().path)
        defer { holder.killAndWait() }
        let error = #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: configuration) }
        #expect(error?.code == .alreadyOpen)
        #expect(error?.localizedDescription.contains("Cannot delete files of an open Realm") == true)
        #expect(Realm.fileExists(for: configuration))
        // The other process's data is still there for this one to read.
        #expect(try Realm(configuration: configuration).objects(ProcessDog.self).count == 1)
    }

    @Test func deleteFilesDeletesTheFileOnceTheOtherProcessHasExited() throws {
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let holder = try startHoldingReaders(folder.file().path)
        holder.killAndWait()
        #expect(try Realm.deleteFiles(for: configuration) == true)
        #expect(!Realm.fileExists(for: configuration))
        // A new, empty file opens in its place.
        #expect(try Realm(configuration: configuration).objects(ProcessDog.self).isEmpty)
    }

    @Test func deleteFilesOfAFileInAMissingFolderSaysNoneExisted() throws {
        let missing = folder.file().deletingLastPathComponent().appendingPathComponent("missing/x.realm")
        let configuration = Realm.Configuration(fileURL: missing, objectTypes: [ProcessDog.self])
        #expect(try Realm.deleteFiles(for: configuration) == false)
    }
}
