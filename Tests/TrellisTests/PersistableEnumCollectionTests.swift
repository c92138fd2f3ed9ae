import Foundation
import Testing
import Trellis

enum CollectedShade: Int, PersistableEnum { case light = 1, mid = 5, dark = 3 }
enum CollectedTaste: String, PersistableEnum { case sweet = "b", sour = "a", bitter = "c" }

final class EnumCollectionHolder: Object {
    @Persisted var shades: List<CollectedShade>
    @Persisted var optionalShades: List<CollectedShade?>
    @Persisted var tastes: MutableSet<CollectedTaste>
    @Persisted var tasteByName: Map<String, CollectedTaste?>
    @Persisted var shadeByName: Map<String, CollectedShade>
}

/// Collections of persistable enums, as in Realm (its `PersistableEnum` is a
/// `RealmCollectionValue`, a `MinMaxType` and `Comparable` by raw value): Realm's own
/// PrimitiveListTests, PrimitiveMutableSetTests and PrimitiveMapTests instantiate their suites
/// with `IntEnum` and `StringEnum`. Before, `List<SomeEnum>` did not compile against Trellis.
@Suite struct PersistableEnumCollectionTests {
    private func realm() throws -> Realm {
        try Realm(configuration: .init(inMemoryIdentifier: "enum-collections-\(UUID().uuidString)",
                                       objectTypes: [EnumCollectionHolder.self]))
    }

    @Test func enumCollectionsStoreAndReadBackTheirCases() throws {
        let realm = try realm()
        let holder = EnumCollectionHolder()
        holder.shades.append(objectsIn: [.dark, .light, .mid])
        holder.optionalShades.append(objectsIn: [nil, .mid])
        holder.tastes.insert(objectsIn: [.sour, .sweet, .sour])
        holder.tasteByName["first"] = .bitter
        holder.tasteByName["none"] = .some(nil)
        holder.shadeByName["x"] = .dark
        try realm.write { realm.add(holder) }

        let read = try #require(realm.objects(EnumCollectionHolder.self).first)
        #expect(Array(read.shades) == [.dark, .light, .mid])
        #expect(Array(read.optionalShades) == [nil, .mid])
        #expect(read.tastes.count == 2)
        #expect(read.tastes.contains(.sour) && read.tastes.contains(.sweet))
        #expect(read.tasteByName["first"] == .some(.bitter))
        #expect(read.tasteByName["none"] == .some(nil))
        #expect(read.shadeByName["x"] == .dark)
        try realm.write { read.shades[0] = .mid }
        #expect(read.shades.first == .mid)
    }

    /// `min()`/`max()` of an `Int`-backed enum compare raw values; strings sort but do not
    /// aggregate (as in Realm, whose core refuses `min` of strings).
    @Test func minMaxAndSortingCompareRawValues() throws {
        let realm = try realm()
        let holder = EnumCollectionHolder()
        holder.shades.append(objectsIn: [.dark, .light, .mid])
        holder.tastes.insert(objectsIn: [.sweet, .bitter, .sour])
        #expect(holder.shades.min() == .light)
        #expect(holder.shades.max() == .mid)
        try realm.write { realm.add(holder) }
        #expect(holder.shades.min() == .light)
        #expect(holder.shades.max() == .mid)
        #expect(Array(holder.shades.sorted()) == [.light, .dark, .mid])
        #expect(Array(holder.shades.sorted(ascending: false)) == [.mid, .dark, .light])
        #expect(Array(holder.tastes.sorted()) == [.sour, .sweet, .bitter])
        #expect(CollectedShade.dark < CollectedShade.mid && CollectedTaste.sour < .sweet)
    }

    @Test func queriesMatchEnumElements() throws {
        let realm = try realm()
        try realm.write {
            let first = realm.create(EnumCollectionHolder.self)
            first.shades.append(.dark)
            let second = realm.create(EnumCollectionHolder.self)
            second.shades.append(objectsIn: [.light, .mid])
            second.tastes.insert(.bitter)
        }
        let holders = realm.objects(EnumCollectionHolder.self)
        #expect(holders.where { $0.shades.contains(.mid) }.count == 1)
        #expect(holders.where { $0.shades == .dark }.count == 1)
        #expect(holders.where { $0.tastes.contains(.bitter) }.count == 1)
        #expect(holders.filter("ANY shades == %@", CollectedShade.light.rawValue).count == 1)
        #expect(holders.first?.shades.where { $0 == .dark }.count == 1)
    }
}
