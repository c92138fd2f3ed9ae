import Foundation
import Testing
@testable import Trellis

/// The memory map grows when it fills; a fixed limit is a typed error that loses nothing.
@Suite struct MapGrowthTests {
    let folder = TemporaryFolder()

    /// Writes `transactions` write transactions of 100 dogs with 1 KiB names each.
    static func fill(_ realm: Realm, transactions: Int, from start: Int = 0) throws {
        let name = String(repeating: "x", count: 1024)
        for batch in 0..<transactions {
            try realm.write {
                for index in 0..<100 {
                    let dog = Dog()
                    dog.name = "\(start + batch * 100 + index) \(name)"
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
        #expect(environment.mapSize == 1 << 20)
        try Self.fill(realm, transactions: 40)  // ~4 MiB of rows
        #expect(environment.mapSize >= 4 << 20)
        #expect(realm.objects(Dog.self).count == 4000)
    }

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

    /// Like Realm, running out of room in the middle of a write transaction is not recoverable
    /// inside it: the process stops with a message saying what to do, and every earlier commit
    /// is intact.
    @Test func writingPastMaximumFileSizeStopsWithAMessageAndKeepsCommittedData() async throws {
        let path = folder.file().path
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self])
            configuration.initialMapSize = 1 << 20
            configuration.maximumFileSize = 2 << 20
            let realm = try Realm(configuration: configuration)
            try MapGrowthTests.fill(realm, transactions: 4)
            try MapGrowthTests.fill(realm, transactions: 100, from: 400)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("would grow the file past the 2097152 bytes mapped"))
        #expect(stderr.contains("Raise Realm.Configuration.maximumFileSize"))
        let reopened = try Realm(configuration: folder.configuration([Dog.self]))
        let committed = reopened.objects(Dog.self).count
        #expect(committed >= 400 && committed % 100 == 0)
        #expect(reopened._consistencyProblems().isEmpty)
    }
}
