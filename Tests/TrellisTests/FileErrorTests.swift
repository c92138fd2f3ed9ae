import Foundation
import Testing
@testable import Trellis

/// Bad files and paths give a typed error, never a crash, and leave the file unchanged.
@Suite struct FileErrorTests {
    let folder = TemporaryFolder()

    func openError(_ url: URL, readOnly: Bool = false) -> Realm.Error? {
        do {
            _ = try Realm(configuration: .init(fileURL: url, readOnly: readOnly, objectTypes: [Dog.self]))
            return nil
        } catch {
            return error as? Realm.Error
        }
    }

    @Test func zeroLengthFileIsNotATrellisFile() throws {
        let url = folder.file("empty.realm")
        _ = FileManager.default.createFile(atPath: url.path, contents: Data())
        let error = openError(url)
        #expect(error?.code == .notATrellisFile)
        #expect(try Data(contentsOf: url).isEmpty)
    }

    @Test func randomBytesAreNotATrellisFile() throws {
        let url = folder.file("random.realm")
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<16384).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: url)
        let error = openError(url)
        #expect(error?.code == .notATrellisFile)
        #expect(error?.message.contains("is not a Trellis database") == true)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func directoryInsteadOfFileIsAFileAccessError() {
        let error = openError(folder.url)
        #expect(error?.code == .fileAccess)
        #expect(error?.message.contains("is a directory") == true)
    }

    @Test func missingFolderIsFileNotFound() {
        let error = openError(folder.url.appendingPathComponent("no/such/folder/x.realm"))
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("Create") == true)
    }

    @Test func readOnlyOpenOfMissingFileIsFileNotFound() {
        let error = openError(folder.file("missing.realm"), readOnly: true)
        #expect(error?.code == .fileNotFound)
    }

    @Test func errorCodesMatchAsPatterns() {
        do {
            _ = try Realm(configuration: .init(fileURL: folder.url, objectTypes: [Dog.self]))
            Issue.record("opening a directory succeeded")
        } catch Realm.Error.Code.fileAccess {
            // expected
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func readOnlyRealmReadsAnExistingFile() throws {
        let url = folder.file("ro.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog(value: ["name": "RO"])) }
        }
        let name = try onOtherThread {
            try Realm(configuration: .init(fileURL: url, readOnly: true, objectTypes: [Dog.self])).objects(Dog.self).first?.name
        }
        #expect(name == "RO")
    }
}
