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

    /// A list whose chunks do not hold what its header says (only a damaged file has one): a
    /// missing chunk and a chunk holding fewer give null elements for the rest, a chunk holding
    /// more is cut, so iteration, the subscript and the count agree and nothing traps.
    @Test func aDamagedListsWalkGivesExactlyTheHeadersCountPerChunk() throws {
        let realm = try realm()
        let owner = try realm.write {
            let owner = realm.create(WalkedOwner.self, value: ["id": 1])
            owner.dogs.append(objectsIn: (0..<700).map { WalkedDog(value: ["id": $0, "age": $0]) })
            return owner
        }
        let table = try #require(realm.core.table(for: WalkedOwner.self, create: false))
        let field = try #require(table.info.field(named: "dogs"))
        let location = CollectionLocation(table: table, key: try #require(owner._managed?.key), field: field)
        let header = ListHeader(try #require(realm.core.collectionHeader(location)))
        #expect(header.chunks.map(\.count) == [256, 256, 188])
        try realm.write {
            let first = location.chunkKey(header.chunks[0].id)
            let short = Array(try #require(realm.core.collectionValue(first)))
            // The first chunk loses its last element's bytes; the second is gone; the third
            // gains one element the header does not count.
            var lengths = [Int]()
            var offset = 0
            while offset < short.count {
                let length = short[offset..<offset + 4].withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
                lengths.append(length)
                offset += 4 + length
            }
            realm.core.putCollectionValue(first, Array(short.prefix(short.count - 4 - (lengths.last ?? 0))))
            realm.core.deleteCollectionValue(location.chunkKey(header.chunks[1].id))
            let third = location.chunkKey(header.chunks[2].id)
            let long = Array(try #require(realm.core.collectionValue(third)))
            realm.core.putCollectionValue(third, long + long.prefix(4 + (lengths.first ?? 0)))
        }
        let keys = realm.core.listLinkKeys(location)
        let elements = realm.core.listElements(location)
        #expect(keys.count == 700 && elements.count == 700 && owner.dogs.count == 700)
        #expect(keys == elements.map { CollectionElement.linkKey($0) ?? .max })
        let present = keys.enumerated().filter { $0.element != .max }.map(\.offset)
        #expect(present == Array(0..<255) + Array(512..<700))
        #expect(elements[255].isEmpty && elements[256..<512].allSatisfy(\.isEmpty))
    }
}
