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
    // MARK: - Damaged and foreign Trellis files

    /// A Trellis file with a few objects, written and closed on another thread.
    func writtenFile(_ name: String, objects: Int = 200) throws -> URL {
        let url = folder.file(name)
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write {
                for i in 0..<objects { realm.add(Dog(value: ["name": "dog \(i)", "age": i])) }
            }
        }
        return url
    }

    func openErrorOnOtherThread(_ url: URL, types: [ObjectBase.Type] = [Dog.self], readOnly: Bool = false) throws
        -> Realm.Error?
    {
        try onOtherThread { () -> Realm.Error? in
            do {
                _ = try Realm(configuration: .init(fileURL: url, readOnly: readOnly, objectTypes: types))
                return nil
            } catch {
                return error as? Realm.Error
            }
        }
    }

    @Test func truncatedFileIsCorruptAndLeftAsItWas() throws {
        let url = try writtenFile("truncated.realm", objects: 2000)
        let whole = try Data(contentsOf: url)
        #if TRELLIS_LMDB
        let cut = whole.prefix(whole.count / 2)
        #else
        // TrellisStorage grows the file in steps of 1 MiB: cut inside the pages the commit uses
        // (the meta slots, pages 1 and 2, count them at byte 24).
        let pageCount = whole.withUnsafeBytes {
            max($0.loadUnaligned(fromByteOffset: 4096 + 24, as: UInt64.self),
                $0.loadUnaligned(fromByteOffset: 8192 + 24, as: UInt64.self))
        }
        #expect(pageCount > 8 && Int(pageCount) * 4096 <= whole.count)
        let cut = whole.prefix(Int(pageCount) * 4096 / 2)
        #endif
        try cut.write(to: url)
        let error = try openErrorOnOtherThread(url)
        #expect(error?.code == .corruptFile)
        #if TRELLIS_LMDB
        #expect(error?.message.contains("is truncated") == true)
        #else
        // The engine finds the commit's pages missing: a damaged page, named.
        #expect(error?.message.contains("is damaged") == true)
        #endif
        #expect(error?.message.contains("Restore it from a backup") == true)
        #expect(try Data(contentsOf: url) == cut)
    }

    @Test func flippedByteInTheSchemaCatalogIsCorruptAndLeftAsItWas() throws {
        let url = try writtenFile("flipped.realm")
        var bytes = try Data(contentsOf: url)
        // Every copy of the catalog (LMDB may keep an older one in a free page) gets one bit flipped
        // inside the class name, which alone would still be valid JSON.
        let needle = Data("\"name\":\"Dog\"".utf8)
        var flipped = 0
        var searchStart = bytes.startIndex
        while let range = bytes.range(of: needle, in: searchStart..<bytes.endIndex) {
            bytes[range.lowerBound + 9] ^= 0x01
            flipped += 1
            searchStart = range.upperBound
        }
        #expect(flipped >= 1)
        try bytes.write(to: url)
        let error = try openErrorOnOtherThread(url)
        #expect(error?.code == .corruptFile)
        #if TRELLIS_LMDB
        #expect(error?.message.contains("schema catalog") == true)
        #else
        // TrellisStorage's page checksum finds the flip before the catalog's own checksum would.
        #expect(error?.message.contains("is damaged") == true)
        #endif
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func fileWithAnExtraClassOpensLikeRealm() throws {
        let url = folder.file("extra.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self, KeyedDog.self]))
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        }
        let names = try onOtherThread {
            try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])).objects(Dog.self).map(\.name)
        }
        #expect(names == ["Rex"])
    }

    @Test func fileWithARetypedPropertyIsASchemaMismatchAndLeftAsItWas() throws {
        let url = try writtenFile("retyped.realm")
        let before = try Data(contentsOf: url)
        let error = try openErrorOnOtherThread(url, types: [Reshaped.Dog.self])
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("Property 'Dog.age' has been changed from 'int' to 'string'.") == true)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func readOnlyFileOpenedForWritingIsPermissionDenied() throws {
        let url = try writtenFile("locked.realm")
        let before = try Data(contentsOf: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path) }
        let error = try openErrorOnOtherThread(url)
        #expect(error?.code == .filePermissionDenied)
        #expect(error?.message.contains("readOnly: true") == true)
        #expect(try Data(contentsOf: url) == before)
        // The way out the message names works.
        let count = try onOtherThread {
            try Realm(configuration: .init(fileURL: url, readOnly: true, objectTypes: [Dog.self])).objects(Dog.self).count
        }
        #expect(count == 200)
    }
}
