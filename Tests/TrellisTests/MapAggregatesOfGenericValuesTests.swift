import Foundation
import Testing
@testable import Trellis

final class MapAggregateHolder: Object {
    @Persisted var scores: Map<String, Int>
    @Persisted var optionalScores: Map<String, Int?>
}

// Generic code that knows only the stored type's protocols, as Realm's own PrimitiveMapTests
// (MinMaxPrimitiveMapTests where V.PersistedType: MinMaxType) and Realm's RealmKeyedCollection
// extensions state them.
private func smallest<V: RealmCollectionValue>(_ map: Map<String, V>) -> V? where V.PersistedType: MinMaxType {
    map.min()
}

private func largest<V: RealmCollectionValue>(_ map: Map<String, V>) -> V? where V.PersistedType: MinMaxType {
    map.max()
}

private func total<V: RealmCollectionValue>(_ map: Map<String, V>) -> V where V.PersistedType: AddableType {
    map.sum()
}

private func mean<V: RealmCollectionValue>(_ map: Map<String, V>) -> Double? where V.PersistedType: AddableType {
    map.average()
}

@Suite struct MapAggregatesOfGenericValuesTests {
    @Test func anUnmanagedMapAggregatesThroughItsStoredTypesProtocols() {
        let map = Map<String, Int>()
        #expect(smallest(map) == nil)
        map["a"] = 4
        map["b"] = -2
        map["c"] = 7
        #expect(smallest(map) == -2)
        #expect(largest(map) == 7)
        #expect(total(map) == 9)
        #expect(mean(map) == 3)
    }

    @Test func aManagedMapOfOptionalsAggregatesThroughItsStoredTypesProtocols() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([MapAggregateHolder.self]))
        let holder = try realm.write {
            realm.create(MapAggregateHolder.self, value: ["optionalScores": ["a": 5, "b": nil, "c": 1] as [String: Int?]])
        }
        #expect(smallest(holder.optionalScores) == .some(1))
        #expect(largest(holder.optionalScores) == .some(5))
        #expect(total(holder.optionalScores) == .some(6))
        #expect(mean(holder.optionalScores) == 3)
        #expect(smallest(holder.scores) == nil)
        #expect(total(holder.scores) == 0)
    }
}
