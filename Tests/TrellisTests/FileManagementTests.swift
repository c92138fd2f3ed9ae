import Foundation
import Testing
@testable import Trellis

/// writeCopy, compaction on launch, deleteFiles, schemaVersionAtURL and seed files.
@Suite struct FileManagementTests {
    let folder = TemporaryFolder()

    func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? 0
    }

    /// Writes `count` dogs with 2 KiB names.
    func fill(_ realm: Realm, _ count: Int, batch: Int = 1000) throws {
        let name = String(repeating: "n", count: 2048)
        var written = 0
        while written < count {
            try realm.write {
                for index in written..<min(count, written + batch) {
                    realm.add(Dog(value: ["name": "\(index) \(name)", "age": index]))
                }
            }
            written += batch
        }
    }

    @Test func writeCopyMakesAFileWithTheSameObjects() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try fill(realm, 50)
        let copy = folder.file("copy.realm")
        try realm.writeCopy(toFile: copy)
        let copied = try onOtherThread {
            try Realm(configuration: .init(fileURL: copy, objectTypes: [Dog.self])).objects(Dog.self).count
        }
        #expect(copied == 50)
        #expect(throws: Realm.Error.self) { try realm.writeCopy(toFile: copy) }
        do {
            try realm.writeCopy(toFile: copy)
        } catch let error as Realm.Error {
            #expect(error.code == .fileExists)
        }
    }

    /// As in Realm: inside a write transaction the copy holds the uncommitted changes, the
    /// transaction stays open, and the copy opens consistent and keeps working (writes, queries,
    /// links and backlinks).
    @Test func writeCopyInsideAWriteTransactionCopiesTheUncommittedChanges() throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Owner(value: ["name": "committed", "dogs": [["name": "rex"]]])) }
        let copy = folder.file("mid-write.realm")
        realm.beginWrite()
        realm.add(Owner(value: ["name": "uncommitted", "dogs": [["name": "tom"], ["name": "kit"]]]))
        realm.objects(Pet.self).filter("name == 'rex'").first?.name = "rex renamed"
        try realm.writeCopy(toFile: copy)
        #expect(realm.isInWriteTransaction)
        realm.cancelWrite()
        #expect(realm.objects(Owner.self).count == 1)

        let seen = try onOtherThread { () -> [String] in
            let copied = try Realm(configuration: .init(fileURL: copy, objectTypes: [Owner.self, Pet.self]))
            let problems = copied._consistencyProblems()
            try copied.write { copied.add(Owner(value: ["name": "after", "dogs": [["name": "new"]]])) }
            let owners = copied.objects(Owner.self).sorted(byKeyPath: "name").map { "\($0.name):\($0.dogs.count)" }
            let pets = copied.objects(Pet.self).map(\.name).sorted()
            let backlinks = copied.objects(Pet.self).filter("name == 'kit'").first?.listOwners.first?.name ?? "none"
            return problems + owners + pets + [backlinks]
        }
        #expect(seen == ["after:1", "committed:1", "uncommitted:2", "kit", "new", "rex renamed", "tom", "uncommitted"])
    }

    @Test func writeCopyToAConfigurationMakesTheFileItOpens() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try fill(realm, 3)
        let target = Realm.Configuration(fileURL: folder.file("target.realm"), objectTypes: [Dog.self])
        try realm.writeCopy(configuration: target)
        #expect(try onOtherThread { try Realm(configuration: target).objects(Dog.self).count } == 3)
        var inMemory = target
        inMemory.inMemoryIdentifier = "nowhere"
        #expect(throws: Realm.Error.self) { try realm.writeCopy(configuration: inMemory) }
    }

    @Test func writeCopyDuringConcurrentWritesIsConsistent() throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let realm = try Realm(configuration: configuration)
        let stop = LockedBox(false)
        let writer = Thread {
            guard let other = try? Realm(configuration: configuration) else { return }
            var index = 0
            while !stop.get() {
                try? other.write {
                    let owner = Owner(value: ["name": "o\(index)"])
                    owner.dogs.append(Pet("p\(index)"))
                    other.add(owner)
                }
                index += 1
            }
        }
        writer.start()
        var copies = [URL]()
        for index in 0..<5 {
            usleep(20_000)
            let url = folder.file("copy\(index).realm")
            try realm.writeCopy(toFile: url)
            copies.append(url)
        }
        stop.set(true)
        while !writer.isFinished { usleep(1000) }
        for url in copies {
            let problems = try onOtherThread { () -> [String] in
                let copy = try Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
                #expect(copy.objects(Owner.self).count == copy.objects(Pet.self).count)
                return copy._consistencyProblems()
            }
            #expect(problems.isEmpty)
        }
    }

    @Test func compactingOnLaunchShrinksAFileMostlyDeleted() throws {
        let url = folder.file()
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try fill(realm, 25_000)  // about 50 MB
            try realm.write { realm.delete(realm.objects(Dog.self).filter("age >= 2500")) }
        }
        let before = size(url)
        let asked = LockedBox<(Int, Int)?>(nil)
        let configuration = Realm.Configuration(fileURL: url, shouldCompactOnLaunch: { total, used in
            asked.set((total, used))
            return total > 2 * used
        }, objectTypes: [Dog.self])
        let count = try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).count }
        let after = size(url)
        print("compaction: \(before) bytes before, \(after) bytes after")
        #expect(count == 2500)
        #expect(asked.get()?.0 == before)
        #expect(after < before / 4)
    }

    @Test func deleteFilesRefusesAnOpenFileAndSaysWhetherOneExisted() throws {
        let configuration = folder.configuration([Dog.self])
        #expect(try Realm.deleteFiles(for: configuration) == false)
        try onOtherThread { _ = try Realm(configuration: configuration) }
        #expect(Realm.fileExists(for: configuration))
        try onOtherThread {
            let realm = try Realm(configuration: configuration)
            var matched = false
            do { _ = try Realm.deleteFiles(for: configuration) } catch Realm.Error.alreadyOpen { matched = true }
            #expect(matched)
            // Realm's code for it: RLMErrorAlreadyOpen, 12.
            let error = #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: configuration) }
            #expect(error.map { ($0 as NSError).code } == 12)
            #expect(Realm.fileExists(for: configuration))
            _ = realm
        }
        #expect(try Realm.deleteFiles(for: configuration) == true)
        #expect(!Realm.fileExists(for: configuration))
    }

    @Test func schemaVersionAtURLReadsTheStoredVersion() throws {
        let url = folder.file()
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: url, schemaVersion: 7, objectTypes: [Dog.self])) }
        #expect(try schemaVersionAtURL(url) == 7)
        #expect(throws: Realm.Error.self) { try schemaVersionAtURL(folder.file("missing.realm")) }
    }

    @Test func aSeedFileIsCopiedOnFirstOpen() throws {
        let seed = folder.file("seed.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: seed, objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog(value: ["name": "seeded"])) }
        }
        let url = folder.file("app.realm")
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self], seedFilePath: seed)
        let names = try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).map(\.name) }
        #expect(names == ["seeded"])
    }
}
