import Foundation
import Testing
@testable import Trellis

/// A model with a mixed property and mixed collections, for nested collection tests.
class MixedHolder: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var anyCol: AnyRealmValue
    @Persisted var anyList: List<AnyRealmValue>
    @Persisted var anyMap: Map<String, AnyRealmValue>
}

/// A link target inside nested collections.
class MixedTarget: Object {
    @Persisted(primaryKey: true) var name = ""
}

@Suite struct AnyRealmValueNestedTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([MixedHolder.self, MixedTarget.self]))
    }

    /// `["a": [1, ["x": true]], "b": "s"]` as nested values.
    static func sample() -> AnyRealmValue {
        .fromDictionary([
            "a": .fromArray([.int(1), .fromDictionary(["x": .bool(true)])]),
            "b": .string("s"),
        ])
    }

    @Test func nestedValuesAreStoredAndReadBack() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyCol = Self.sample()
        #expect(holder.anyCol.dictionaryValue?["a"]?.listValue?[1].dictionaryValue?["x"] == .bool(true))
        try realm.write { realm.add(holder) }
        let read = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 0))
        #expect(read.anyCol.dictionaryValue?.count == 2)
        #expect(read.anyCol.dictionaryValue?["b"] == .string("s"))
        #expect(read.anyCol.dictionaryValue?["a"]?.listValue?[0] == .int(1))
        #expect(read.anyCol.dictionaryValue?["a"]?.listValue?[1].dictionaryValue?["x"] == .bool(true))
        #expect(read.anyCol.dictionaryValue?.realm != nil)
        #expect(read.anyCol.listValue == nil)
        // A new Realm instance (another accessor) reads the same.
        let reopened = try Realm(configuration: folder.configuration([MixedHolder.self, MixedTarget.self]))
        #expect(reopened.objects(MixedHolder.self)[0].anyCol.dictionaryValue?["a"]?.listValue?.count == 2)
    }

    @Test func nestedListsMutateInPlaceToAnyDepth() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyCol = .fromArray([.fromArray([.fromArray([.int(1)])]), .bool(false)])
        try realm.write { realm.add(holder) }
        let innermost = try #require(holder.anyCol.listValue?[0].listValue?[0].listValue)
        try realm.write {
            innermost.append(.string("two"))
            innermost.insert(.double(0.5), at: 0)
            holder.anyCol.listValue?[1] = .fromDictionary(["k": .int(7)])
            holder.anyCol.listValue?[1].dictionaryValue?["k2"] = .fromArray([])
            holder.anyCol.listValue?[1].dictionaryValue?["k2"]?.listValue?.append(.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))))
        }
        #expect(Array(innermost) == [.double(0.5), .int(1), .string("two")])
        #expect(holder.anyCol.listValue?[1].dictionaryValue?["k"] == .int(7))
        #expect(holder.anyCol.listValue?[1].dictionaryValue?["k2"]?.listValue?.count == 1)
        try realm.write {
            innermost.remove(at: 1)
            innermost.move(from: 1, to: 0)
            holder.anyCol.listValue?[1].dictionaryValue?["k"] = nil
        }
        #expect(Array(innermost) == [.string("two"), .double(0.5)])
        #expect(holder.anyCol.listValue?[1].dictionaryValue?.keys == ["k2"])
        try realm.write { holder.anyCol.listValue?.removeAll() }
        #expect(holder.anyCol.listValue?.count == 0)
        #expect(innermost.isInvalidated)
    }

    @Test func mutatingANestedCollectionOutsideAWriteTraps() async {
        await #expect(processExitsWith: .failure) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([MixedHolder.self, MixedTarget.self]))
            let holder = MixedHolder()
            holder.anyCol = .fromArray([.int(1)])
            try realm.write { realm.add(holder) }
            holder.anyCol.listValue?.append(.int(2))
        }
    }

    @Test func nestedCollectionsInsideMixedListsAndMapsAreLive() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyList.append(.fromArray([.int(1)]))
        holder.anyMap["m"] = .fromDictionary(["n": .int(2)])
        try realm.write { realm.add(holder) }
        try realm.write {
            holder.anyList[0].listValue?.append(.int(3))
            holder.anyMap["m"]?.dictionaryValue?["o"] = .int(4)
        }
        #expect(holder.anyList[0].listValue.map(Array.init) == [.int(1), .int(3)])
        #expect(holder.anyMap["m"]?.dictionaryValue?["o"] == .int(4))
        #expect(Array(holder.anyList).first?.listValue?.count == 2)
    }

    @Test func objectsInsideNestedCollectionsAreAddedAndRead() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyCol = .fromDictionary(["pet": .object(MixedTarget(value: ["name": "Rex"])),
                                         "more": .fromArray([.object(MixedTarget(value: ["name": "Fido"]))])])
        try realm.write { realm.add(holder) }
        #expect(realm.objects(MixedTarget.self).count == 2)
        #expect(holder.anyCol.dictionaryValue?["pet"]?.object(MixedTarget.self)?.name == "Rex")
        #expect(holder.anyCol.dictionaryValue?["more"]?.listValue?[0].object(MixedTarget.self)?.name == "Fido")
        try realm.write { realm.delete(realm.objects(MixedTarget.self).filter("name == 'Rex'")) }
        #expect(holder.anyCol.dictionaryValue?["pet"] == AnyRealmValue.none)
    }

    @Test func createAcceptsSwiftArraysAndDictionariesAsNestedValues() throws {
        let realm = try realm()
        try realm.write {
            realm.create(MixedHolder.self, value: ["id": 1, "anyCol": ["k": [[1, "two"], ["x": 3.5]]] as [String: Any]])
        }
        let holder = try #require(realm.object(ofType: MixedHolder.self, forPrimaryKey: 1))
        #expect(holder.anyCol.dictionaryValue?["k"]?.listValue?[0].listValue?[1] == .string("two"))
        #expect(holder.anyCol.dictionaryValue?["k"]?.listValue?[1].dictionaryValue?["x"] == .double(3.5))
    }

    @Test func equalityFollowsRealm() throws {
        #expect(AnyRealmValue.fromDictionary([:]) == AnyRealmValue.fromDictionary([:]))
        #expect(Self.sample() == Self.sample())
        #expect(AnyRealmValue.fromArray([.int(1)]) != AnyRealmValue.fromArray([.int(2)]))
        #expect(AnyRealmValue.fromArray([]) != AnyRealmValue.fromDictionary([:]))
        let realm = try realm()
        let first = MixedHolder(), second = MixedHolder()
        second.id = 1
        first.anyCol = Self.sample()
        second.anyCol = Self.sample()
        try realm.write { realm.add([first, second]) }
        // Managed nested collections are equal only when they are the same stored collection.
        #expect(first.anyCol == first.anyCol)
        #expect(first.anyCol.dictionaryValue?["a"] == first.anyCol.dictionaryValue?["a"])
        #expect(first.anyCol != second.anyCol)
        #expect(first.anyCol.dictionaryValue?["a"] != second.anyCol.dictionaryValue?["a"])
        var hashes = Set<Int>()
        for value in [first.anyCol, second.anyCol, Self.sample()] { hashes.insert(value.hashValue) }
        #expect(hashes.count == 1)
    }

    @Test func predicateTextReachesIntoNestedCollections() throws {
        let realm = try realm()
        try realm.write {
            realm.create(MixedHolder.self, value: ["id": 1, "anyCol": [1, ["k": "x"], [5, 6]] as [Any]])
            realm.create(MixedHolder.self, value: ["id": 2, "anyCol": ["k": "y", "n": [1, 2, 3]] as [String: Any]])
            realm.create(MixedHolder.self, value: ["id": 3, "anyCol": 1])
        }
        func ids(_ text: String, _ args: Any...) -> [Int] {
            realm.objects(MixedHolder.self).filter(text, args).map(\.id).sorted()
        }
        #expect(ids("anyCol[0] == 1") == [1])
        #expect(ids("anyCol['k'] == 'y'") == [2])
        #expect(ids("anyCol[1]['k'] == 'x'") == [1])
        #expect(ids("anyCol[*] == 6") == [])
        #expect(ids("anyCol[2][*] == 6") == [1])
        #expect(ids("anyCol[*][*] == 2") == [2])
        #expect(ids("anyCol['n'].@size == 3") == [2])
        #expect(ids("anyCol[%@] == %@", 0, 1) == [1])
        #expect(ids("anyCol == 1") == [3])
        #expect(ids("anyCol[5] == nil") == [1, 2, 3])
    }

    @Test func typedQueriesReachIntoNestedCollections() throws {
        let realm = try realm()
        try realm.write {
            realm.create(MixedHolder.self, value: ["id": 1, "anyCol": [1, ["k": "x"]] as [Any]])
            realm.create(MixedHolder.self, value: ["id": 2, "anyCol": ["k": "y"] as [String: Any]])
        }
        let objects = realm.objects(MixedHolder.self)
        #expect(objects.where { $0.anyCol[0] == .int(1) }.map(\.id) == [1])
        #expect(objects.where { $0.anyCol["k"] == .string("y") }.map(\.id) == [2])
        #expect(objects.where { $0.anyCol[1]["k"] == .string("x") }.map(\.id) == [1])
        #expect(objects.where { $0.anyCol.any == .string("y") }.map(\.id) == [2])
    }

    @Test func nestedCollectionsFilterAndAggregateAsValues() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyCol = .fromArray([.int(3), .int(1), .string("a"), .int(2)])
        try realm.write { realm.add(holder) }
        let list = try #require(holder.anyCol.listValue)
        #expect(Array(list.filter("self > 1")) == [.int(3), .int(2)])
        #expect(list.where { $0 == .int(1) }.count == 1)
        let live = list.filter("self > 1")
        try realm.write { list.append(.int(9)) }
        #expect(live.count == 3)
    }

    @Test func nestedCollectionsAreObserved() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.anyCol = .fromDictionary(["l": .fromArray([.int(1), .int(2)])])
        try realm.write { realm.add(holder) }
        let list = try #require(holder.anyCol.dictionaryValue?["l"]?.listValue)
        var listChanges = [String]()
        let listToken = list.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                listChanges.append("\(deletions) \(insertions) \(modifications)")
            }
        }
        let map = try #require(holder.anyCol.dictionaryValue)
        var mapChanges = [String]()
        let mapToken = map.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                mapChanges.append("\(deletions) \(insertions) \(modifications)")
            }
        }
        realm.refresh()
        try realm.write { list.append(.int(3)) }
        try realm.write { list[0] = .string("one") }
        try realm.write { map["new"] = .bool(true) }
        listToken.invalidate()
        mapToken.invalidate()
        #expect(listChanges == ["[] [2] []", "[] [] [0]"])
        // The list is the value under "l": changing it modifies that entry.
        #expect(mapChanges == ["[] [] [\"l\"]", "[] [] [\"l\"]", "[] [\"new\"] []"])
    }

    @Test func extendedJSONExportsAndImportsNestedValues() throws {
        let realm = try realm()
        let holder = MixedHolder()
        holder.id = 4
        holder.anyCol = .fromDictionary(["a": .fromArray([.int(1), .string("s"), .none]), "d": .double(1.5)])
        try realm.write { realm.add(holder) }
        let document = try ExtendedJSON.document(for: holder)
        let text = String(decoding: document, as: UTF8.self)
        #expect(text.contains(#""anyCol":{"a":[{"$numberLong":"1"},"s",null],"d":{"$numberDouble":"1.5"}}"#))
        let otherFolder = TemporaryFolder()
        let other = try Realm(configuration: otherFolder.configuration([MixedHolder.self, MixedTarget.self]))
        try ExtendedJSON.importDocuments([document], as: MixedHolder.self, into: other)
        let imported = try #require(other.object(ofType: MixedHolder.self, forPrimaryKey: 4))
        #expect(imported.anyCol.dictionaryValue?["a"]?.listValue.map(Array.init) == [.int(1), .string("s"), .none])
        #expect(imported.anyCol.dictionaryValue?["d"] == .double(1.5))
    }

    @Test func nestingDeeperThanTheLimitTraps() async {
        await #expect(processExitsWith: .failure) {
            var value = AnyRealmValue.int(0)
            for _ in 0...MixedCoding.maximumDepth { value = .fromArray([value]) }
            _ = MixedCoding.encode(try #require(value.storedTree(nil)))
        }
    }
}
