import Foundation
import Testing
@testable import Trellis

/// `Realm.deleteFiles(for:)` refuses a file another process has open, as Realm does ("Cannot
/// delete files of an open Realm"): deleting it under a live process would leave that process
/// writing to a file nobody else can open, and the next open would start an empty one.
@Suite struct DeleteFilesProcessTests {
    let folder = TemporaryFolder()

    /// Starts `TrellisProcessHelper hold-readers PATH 1` and waits until it has the file open.
    func holdOpenInAnotherProcess(_ path: String) throws -> Process {
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = ["hold-readers", path, "1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableDataUntilNewline(), as: UTF8.self)
        #expect(line == "holding 1")
        return process
    }

    @Test func deleteFilesRefusesAFileAnotherProcessHasOpen() throws {
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let holder = try holdOpenInAnotherProcess(folder.file().path)
        defer {
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
            holder.waitUntilExit()
        }
        let error = #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: configuration) }
        #expect(error?.code == .alreadyOpen)
        #expect(error?.localizedDescription.contains("Cannot delete files of an open Realm") == true)
        #expect(Realm.fileExists(for: configuration))
        // The other process's data is still there for this one to read.
        #expect(try Realm(configuration: configuration).objects(ProcessDog.self).count == 1)
    }

    @Test func deleteFilesDeletesTheFileOnceTheOtherProcessHasExited() throws {
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let holder = try holdOpenInAnotherProcess(folder.file().path)
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
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
