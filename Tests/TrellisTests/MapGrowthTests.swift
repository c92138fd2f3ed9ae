import Foundation
import Testing
@testable import Trellis

/// The memory map grows when it fills; a fixed limit is a typed error that loses nothing.
@Suite struct MapGrowthTests {
    let folder = TemporaryFolder()

    /// Writes `transactions` write transactions of `dogs` dogs with 1 KiB names each.
    static func fill(_ realm: Realm, transactions: Int, from start: Int = 0, dogs: Int = 100) throws {
        let name = String(repeating: "x", count: 1024)
        for batch in 0..<transactions {
            try realm.write {
                for index in 0..<dogs {
                    let dog = Dog()
                    dog.name = "\(start + batch * dogs + index) \(name)"
                    dog.age = index
                    realm.add(dog)
                }
            }
        }
    }

    @Test func mapGrowsWhenAWriteBeginsMoreThanHalfFull() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.initialMapSize = 1 << 20
        let realm = try Realm(configuration: configuration)
        let environment = realm.core.file.environment
        #if TRELLIS_LMDB
        #expect(environment.mapSize == 1 << 20)
        #else
        // LMDB detail: TrellisStorage ignores initialMapSize and maps the file as it grows, so a
        // new file starts small instead of at the initial map size.
        #expect(environment.mapSize < 1 << 20)
        #endif
        try Self.fill(realm, transactions: 40)  // ~4 MiB of rows
        #expect(environment.mapSize >= 4 << 20)
        #expect(realm.objects(Dog.self).count == 4000)
    }

    #if TRELLIS_LMDB  // LMDB's map address (the TrellisStorage build maps the file itself)
    /// Values are checked against the end of the file only inside the map, so the map's
    /// address must be the real one (LMDB's `me_mapaddr` is zero), before and after it moves.
    @Test func mapRangeContainsTheRowsReadBeforeAndAfterGrowth() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.initialMapSize = 1 << 20
        let realm = try Realm(configuration: configuration)
        let environment = realm.core.file.environment
        try Self.fill(realm, transactions: 1)
        func firstRowAddress() throws -> UInt {
            let dog = try #require(realm.objects(Dog.self).first)
            let managed = try #require(dog._managed)
            let row = try #require(realm.core.transaction.get(managed.table.rows, integerKey: managed.key))
            return UInt(bitPattern: row.baseAddress)
        }
        #expect(environment.mapRange.contains(try firstRowAddress()))
        #expect(environment.mapRange.count == environment.mapSize)
        try Self.fill(realm, transactions: 40)  // the map grows, and may move
        realm.refresh()
        #expect(environment.mapSize >= 4 << 20)
        #expect(environment.mapRange.contains(try firstRowAddress()))
        #expect(environment.mapRange.count == environment.mapSize)
    }
    #endif

    @Test func grownFileReopensWithAllItsObjects() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.initialMapSize = 1 << 20
        do {
            let realm = try Realm(configuration: configuration)
            try Self.fill(realm, transactions: 30)
        }
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.objects(Dog.self).count == 3000)
        #expect(reopened.core.file.environment.mapSize >= 3 << 20)
        try Self.fill(reopened, transactions: 5, from: 3000)
        #expect(reopened.objects(Dog.self).count == 3500)
    }

    /// A write that would grow the file past `maximumFileSize` throws a typed error when the
    /// transaction ends; the file is as it was before that transaction, and usable.
    @Test func writingPastMaximumFileSizeThrowsAndLeavesTheFileAsItWas() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.initialMapSize = 1 << 20
        configuration.maximumFileSize = 2 << 20
        let realm = try Realm(configuration: configuration)
        try Self.fill(realm, transactions: 4)
        var thrown: Realm.Error?
        do {
            try Self.fill(realm, transactions: 1, from: 400, dogs: 5000)
        } catch let error as Realm.Error {
            thrown = error
        }
        #expect(thrown?.code == .fileSizeLimitReached)
        #expect(thrown?.message.contains("Raise Realm.Configuration.maximumFileSize") == true)
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Dog.self).count == 400)
        #expect(realm._consistencyProblems().isEmpty)
        // Smaller transactions still fit.
        try Self.fill(realm, transactions: 1, from: 400)
        #expect(realm.objects(Dog.self).count == 500)
    }

    /// The same for a disk that is really full: a 1 MiB tmpfs (needs root to mount; the test
    /// records why it could not run otherwise).
    @Test func writingToAFullDiskThrowsDiskFullAndLeavesTheFileAsItWas() throws {
        let mountPoint = folder.url.appendingPathComponent("tiny-disk")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard shell("mount -t tmpfs -o size=1m tmpfs '\(mountPoint.path)'") == 0 else {
            withKnownIssue("cannot mount a tmpfs here (not root?)") { throw Realm.Error(.fail, "no tmpfs") }
            return
        }
        defer { _ = shell("umount '\(mountPoint.path)'") }
        var configuration = Realm.Configuration(fileURL: mountPoint.appendingPathComponent("full.realm"),
                                                objectTypes: [Dog.self])
        configuration.initialMapSize = 8 << 20
        let realm = try Realm(configuration: configuration)
        try Self.fill(realm, transactions: 2)
        var thrown: Realm.Error?
        do {
            try Self.fill(realm, transactions: 1, from: 200, dogs: 3000)
        } catch let error as Realm.Error {
            thrown = error
        }
        #expect(thrown?.code == .diskFull || thrown?.code == .fileSizeLimitReached, "\(String(describing: thrown))")
        #expect(thrown?.message.contains("rolled back") == true)
        #expect(realm.objects(Dog.self).count == 200)
        #expect(realm._consistencyProblems().isEmpty)
    }

    private func shell(_ command: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
