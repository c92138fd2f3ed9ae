import Foundation
import Testing
import Trellis

enum DeclarationMood: Int, PersistableEnum { case calm = 1, busy = 2 }

/// A code stored as its string.
struct DeclarationCode: CustomPersistable, Hashable {
    typealias PersistedType = String
    var text: String
    init(persistedValue: String) { text = persistedValue }
    var persistableValue: String { text }
}

final class LegacyEnumHolder: Object {
    @Persisted var name = ""
    let mood = RealmProperty<DeclarationMood?>()
    @available(*, deprecated)
    let oldMood = RealmOptional<DeclarationMood>()
}

final class IndexedCustomHolder: Object {
    @Persisted(indexed: true) var code: DeclarationCode
    @Persisted(indexed: true) var optionalCode: DeclarationCode?
    @Persisted var plain: DeclarationCode
}

/// The name of a keyed collection's stored value type, reached generically.
func storedValueTypeName<T: RealmKeyedCollection>(_ collection: T) -> String {
    "\(T.Value.PersistedType.self)"
}

/// Realm's generic constraints on declarations, which its own test models
/// (SwiftTestObjects, CustomPersistableTestObjects) rely on:
/// - `PersistableEnum` refines `RealmEnum`, a `RealmOptionalType`, so `RealmProperty<E?>` and
///   `RealmOptional<E>` take a persistable enum (Realm's `let optEnumCol = RealmOptional<IntEnum>()`);
/// - `@Persisted(indexed:)` asks the *stored* type to be indexable
///   (`extension Persisted where Value.PersistedType: _Indexable`), so a `CustomPersistable`
///   stored as `String` or `Int` can be indexed (`@Persisted(indexed: true) var intCol: IntWrapper`).
/// - `RealmKeyedCollection`'s `Value` is a `RealmCollectionValue`, so generic code over maps
///   names `T.Value.PersistedType` (Realm's QueryTests: `where T.Value.PersistedType: _QueryNumeric`).
/// Before, none of these compiled against Trellis.
@Suite struct RealmGenericDeclarationTests {
    @Test func genericCodeReachesAKeyedCollectionsPersistedValueType() {
        #expect(storedValueTypeName(Map<String, Int>()) == "Int")
        #expect(storedValueTypeName(Map<String, DeclarationCode>()) == "String")
        // An enum is stored as its raw value (Realm: `PersistableEnum.PersistedType == RawValue`).
        #expect(storedValueTypeName(Map<String, DeclarationMood?>()) == "Optional<Int>")
    }

    @Test @available(*, deprecated)
    func aPersistableEnumParameterizesRealmPropertyAndRealmOptional() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "legacy-enum-\(UUID().uuidString)",
                                                   objectTypes: [LegacyEnumHolder.self]))
        let holder = LegacyEnumHolder()
        #expect(holder.mood.value == nil)
        holder.mood.value = .busy
        holder.oldMood.value = .calm
        try realm.write { realm.add(holder) }
        let read = try #require(realm.objects(LegacyEnumHolder.self).first)
        #expect(read.mood.value == .busy)
        #expect(read.oldMood.value == .calm)
        try realm.write { read.mood.value = nil }
        #expect(read.mood.value == nil)
        let property = try #require(realm.schema["LegacyEnumHolder"]?["mood"])
        #expect(property.type == .int && property.isOptional)
    }

    @Test func aCustomPersistableStoredAsAnIndexableTypeCanBeIndexed() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "indexed-custom-\(UUID().uuidString)",
                                                   objectTypes: [IndexedCustomHolder.self]))
        let schema = try #require(realm.schema["IndexedCustomHolder"])
        #expect(schema["code"]?.isIndexed == true)
        #expect(schema["optionalCode"]?.isIndexed == true)
        #expect(schema["plain"]?.isIndexed == false)
        try realm.write {
            for text in ["b", "a", "c"] {
                let holder = IndexedCustomHolder()
                holder.code = DeclarationCode(persistedValue: text)
                holder.plain = DeclarationCode(persistedValue: text)
                realm.add(holder)
            }
        }
        let found = realm.objects(IndexedCustomHolder.self).filter("code == %@", "a")
        #expect(found.count == 1)
        #expect(found.first?.plain.text == "a")
    }
}
