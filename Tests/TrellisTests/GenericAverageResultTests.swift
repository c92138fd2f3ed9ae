import Foundation
import Testing
import Trellis

/// Realm's `average()` on collections of values asks only that the result type's persisted type
/// be addable (`func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType`),
/// so generic code naming its result type that way compiles (Realm's AnyRealmValueTests and
/// Primitive*Tests: `map.average() as V.AverageType?`). Before, Trellis also required
/// `T: AddableType`, and such code did not compile.
@Suite struct GenericAverageResultTests {
    func averageOfMap<T: _HasPersistedType>(_ map: Map<String, Int>, as _: T.Type) -> T?
        where T.PersistedType: AddableType
    {
        map.average()
    }

    func averageOfList<T: _HasPersistedType>(_ list: List<Int>, as _: T.Type) -> T?
        where T.PersistedType: AddableType
    {
        list.average()
    }

    @Test func averageNamesItsResultTypeByThePersistedTypeAlone() {
        let map = Map<String, Int>()
        map["a"] = 1
        map["b"] = 2
        #expect(averageOfMap(map, as: Double.self) == 1.5)
        let list = List<Int>()
        list.append(objectsIn: [1, 2, 6])
        #expect(averageOfList(list, as: Double.self) == 3)
        #expect(averageOfList(List<Int>(), as: Double.self) == nil)
    }
}
