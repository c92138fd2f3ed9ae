import Foundation
import Testing
@testable import Trellis

/// A generic model class: each specialization is its own class ("GenericHolder<Int>").
final class GenericHolder<Element: RealmCollectionValue>: Object {
    @Persisted var name = ""
    @Persisted var rounds = 0
    @Persisted var values: List<Element>
}

/// A generic class's key paths are made afresh on every access and freed after it, so a freed
/// key path's address can come back as another property's key path. Trellis used to cache key
/// paths by identity, and a write to `name` then went to `values` (or another column).
@Suite struct GenericModelTests {
    private func makeRealm(_ dir: URL) throws -> Realm {
        try Realm(configuration: .init(fileURL: dir.appendingPathComponent("g.realm"),
                                       objectTypes: [GenericHolder<Int>.self, GenericHolder<String>.self]))
    }

    @Test func eachPropertyOfAGenericModelReadsAndWritesItsOwnColumn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("generic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let realm = try makeRealm(dir)
        let ints = GenericHolder<Int>()
        let strings = GenericHolder<String>()
        try realm.write {
            realm.add(ints)
            realm.add(strings)
            ints.values.append(objectsIn: [1, 2, 3])
        }
        for round in 0..<60 {
            let frozenValues = ints.values.freeze()
            let frozenResults = realm.objects(GenericHolder<Int>.self).freeze()
            try realm.write {
                ints.values.append(round)
                ints.name = "ints \(round)"
                ints.rounds = round
                strings.values.append("s\(round)")
                strings.name = "strings \(round)"
                strings.rounds = round * 2
            }
            #expect(frozenValues.count == 3 + round)
            #expect(frozenResults.count == 1)
            #expect(ints.name == "ints \(round)")
            #expect(ints.rounds == round)
            #expect(strings.name == "strings \(round)")
            #expect(strings.rounds == round * 2)
            #expect(strings.values.last == "s\(round)")
        }
        #expect(Array(ints.values.prefix(4)) == [1, 2, 3, 0])
        #expect(ints.values.count == 63)
        #expect(realm.objects(GenericHolder<Int>.self).where { $0.rounds == 59 }.count == 1)
        #expect(realm.objects(GenericHolder<String>.self).where { $0.name == "strings 59" }.count == 1)
        #expect(realm.objects(GenericHolder<String>.self).filter("rounds == 118").count == 1)
    }

    @Test func eachSpecializationOfAGenericModelIsItsOwnClass() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("generic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let realm = try makeRealm(dir)
        try realm.write {
            realm.add(GenericHolder<Int>(value: ["name": "i", "values": [1, 2]]))
            realm.add(GenericHolder<String>(value: ["name": "s", "values": ["a"]]))
        }
        #expect(realm.objects(GenericHolder<Int>.self).count == 1)
        #expect(realm.objects(GenericHolder<String>.self).count == 1)
        #expect(realm.objects(GenericHolder<Int>.self).first?.values.sum() == 3)
        #expect(realm.schema.objectSchema.map(\.className).sorted() == ["GenericHolder<Int>", "GenericHolder<String>"])
    }
}
