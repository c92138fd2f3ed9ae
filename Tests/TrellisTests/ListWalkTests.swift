import Foundation
import Testing
@testable import Trellis

// Issue 37 (session 39): iterating a List of objects reads its elements' keys straight from the
// list's header and chunks in place (`RealmCore.listLinkKeys`), with no header or element arrays
// made on the way. The walk must give what the list's subscript gives, chunk after chunk, the
// list as it was when iteration began, and read a damaged header as an empty list, as the
// header's own parse does.

final class WalkedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
}

final class WalkedOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dogs: List<WalkedDog>
}

@Suite struct ListWalkTests {
    let folder = TemporaryFolder()

    private func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([WalkedDog.self, WalkedOwner.self]))
    }

    @Test func aWalkGivesEveryChunksElementsInOrderAsTheSubscriptDoes() throws {
        let realm = try realm()
        var expected = [Int]()
        try realm.write {
            let dogs = (0..<900).map { realm.create(WalkedDog.self, value: ["id": $0, "age": $0 * 3]) }
            let owner = realm.create(WalkedOwner.self, value: ["id": 1])
            owner.dogs.append(objectsIn: dogs[0..<700])
            expected = Array(0..<700)
            // Inserts and removals across the chunks (256 elements each at most).
            for (position, id) in [(0, 700), (256, 701), (500, 702), (703, 703), (128, 704)] {
                owner.dogs.insert(dogs[id], at: position)
                expected.insert(id, at: position)
            }
            for position in [600, 255, 0] {
                owner.dogs.remove(at: position)
                expected.remove(at: position)
            }
            realm.create(WalkedOwner.self, value: ["id": 2])
            let single = realm.create(WalkedOwner.self, value: ["id": 3])
            single.dogs.append(dogs[899])
        }
        let owner = try #require(realm.object(ofType: WalkedOwner.self, forPrimaryKey: 1))
        var walked = [Int]()
        for dog in owner.dogs {
            #expect(dog.age == dog.id * 3)
            walked.append(dog.id)
        }
        #expect(walked == expected)
        #expect(walked == (0..<owner.dogs.count).map { owner.dogs[$0].id })
        #expect(Array(try #require(realm.object(ofType: WalkedOwner.self, forPrimaryKey: 2)).dogs).isEmpty)
        #expect(Array(try #require(realm.object(ofType: WalkedOwner.self, forPrimaryKey: 3)).dogs).map(\.id) == [899])
    }

    @Test func aWalkGivesTheListAsItWasWhenIterationBegan() throws {
        let realm = try realm()
        try realm.write {
            let owner = realm.create(WalkedOwner.self, value: ["id": 1])
            owner.dogs.append(objectsIn: (0..<300).map { WalkedDog(value: ["id": $0, "age": $0]) })
            var walked = [Int]()
            for dog in owner.dogs {
                walked.append(dog.id)
                if dog.id == 10 {
                    owner.dogs.removeAll()
                    owner.dogs.append(dog)
                }
            }
            #expect(walked == Array(0..<300))
            #expect(Array(owner.dogs).map(\.id) == [10])
        }
    }

    @Test func aHeaderCountIsReadInPlaceAsItsParseReadsIt() {
        func header(count: UInt32, chunks: [(UInt32, UInt32)], extra: [UInt8] = []) -> [UInt8] {
            var bytes = [UInt8]()
            for word in [count, UInt32(chunks.count + 1)] + chunks.flatMap({ [$0.0, $0.1] }) {
                withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
            }
            return bytes + extra
        }
        let cases: [[UInt8]] = [
            header(count: 0, chunks: []),
            header(count: 10, chunks: [(0, 10)]),
            header(count: 300, chunks: [(0, 256), (1, 44)]),
            header(count: 11, chunks: [(0, 10)]),  // a count that is not the chunks' sum
            header(count: 257, chunks: [(0, 257)]),  // a chunk over the capacity
            header(count: 10, chunks: [(0, 10)], extra: [1, 2, 3]),  // a size not 8 + 8 per chunk
            [1, 0, 0],
        ]
        let answers = cases.map { bytes in bytes.withUnsafeBytes { ListHeader.validCount($0) } }
        #expect(answers == [0, 10, 300, nil, nil, nil, nil])
        for bytes in cases {
            let parsed = bytes.withUnsafeBytes { ListHeader($0) }
            #expect(bytes.withUnsafeBytes { ListHeader.validCount($0) } ?? 0 == parsed.count)
        }
    }
}
