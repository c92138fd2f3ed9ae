import Foundation
import Testing
@testable import Trellis

/// Realm's FailableCustomObject: every kind of property of a failable custom type.
final class RefusedValueHolder: Object {
    @Persisted var int: OneRefusingInt
    @Persisted var optInt: OneRefusingInt?
    @Persisted var listInt: List<OneRefusingInt>
    @Persisted var optListInt: List<OneRefusingInt?>
    @Persisted var setInt: MutableSet<OneRefusingInt>
    @Persisted var optSetInt: MutableSet<OneRefusingInt?>
    @Persisted var mapInt: Map<String, OneRefusingInt>
    @Persisted var optMapInt: Map<String, OneRefusingInt?>
    @Persisted var next: RefusedValueHolder?
}

/// `create` stores a value of a failable custom type's persisted type that its init refuses,
/// as Realm does; only reading it traps, or reads nil where optional (RealmSwift/Tests
/// CustomObjectCreationTests `testCreateFailable`).
@Suite struct CustomPersistableCreateRefusedTests {
    static var refusedValues: [String: Any] { ["int": 1, "optInt": 1, "listInt": [1], "optListInt": [1],
                                               "setInt": [1], "optSetInt": [1], "mapInt": ["1": 1],
                                               "optMapInt": ["1": 1]] }

    static func realm() throws -> Realm {
        try Realm(configuration: .init(inMemoryIdentifier: "create-refused-\(UUID().uuidString)",
                                       objectTypes: [RefusedValueHolder.self]))
    }

    /// The holder `create` made from ``refusedValues``, in a write left open.
    static func createdHolder() throws -> RefusedValueHolder {
        let realm = try realm()
        realm.beginWrite()
        return realm.create(RefusedValueHolder.self, value: refusedValues)
    }

    @Test func createStoresTheRefusedValuesAsGiven() throws {
        let realm = try Self.realm()
        try realm.write { realm.create(RefusedValueHolder.self, value: Self.refusedValues) }
        let stored = try #require(realm.dynamicObjects("RefusedValueHolder").first)
        #expect(stored["int"] as? Int == 1)
        #expect(stored["optInt"] as? Int == 1)
        #expect((stored["listInt"] as? List<Int>).map(Array.init) == [1])
        #expect((stored["optListInt"] as? List<Int?>).map(Array.init) == [1])
        #expect((stored["setInt"] as? MutableSet<Int>).map(Array.init) == [1])
        #expect((stored["mapInt"] as? Map<String, Int>)?["1"] == 1)
        #expect((stored["optMapInt"] as? Map<String, Int?>)?["1"] == .some(1))
    }

    @Test func optionalPropertiesAndElementsReadARefusedValueAsNil() throws {
        let holder = try Self.createdHolder()
        #expect(holder.optInt == nil)
        #expect(Array(holder.optListInt) == [nil])
        #expect(Array(holder.optSetInt) == [nil])
        #expect(holder.optMapInt["1"] == .some(nil))
    }

    @Test func valuesTheInitTakesAreStoredBesideRefusedOnes() throws {
        let realm = try Self.realm()
        realm.beginWrite()
        let holder = realm.create(RefusedValueHolder.self, value: ["int": 2, "optListInt": [2, 1, 3],
                                                                   "listInt": [OneRefusingInt(persistedValue: 4), 5]])
        #expect(holder.int.persistableValue == 2)
        #expect(holder.optListInt.map { $0?.persistableValue } == [2, nil, 3])
        #expect(holder.listInt.map(\.persistableValue) == [4, 5])
        realm.cancelWrite()
    }

    @Test func aLinkedObjectCreatedFromADictionaryStoresItsRefusedValues() throws {
        let realm = try Self.realm()
        realm.beginWrite()
        let holder = realm.create(RefusedValueHolder.self, value: ["int": 2, "next": ["int": 1, "optInt": 1]])
        let next = try #require(holder.next)
        #expect(next.optInt == nil)
        #expect(realm.dynamicObjects("RefusedValueHolder").filter("int == 1").count == 1)
        realm.cancelWrite()
    }

    @Test func readingARefusedPropertyTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try CustomPersistableCreateRefusedTests.createdHolder().int
        }
        #expect(exitTestStandardError(result).contains(
            "Failed to convert persisted value '1' to type 'OneRefusingInt' in a non-optional context."))
    }

    @Test func readingARefusedListElementTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try CustomPersistableCreateRefusedTests.createdHolder().listInt[0]
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }

    @Test func readingARefusedSetElementTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try CustomPersistableCreateRefusedTests.createdHolder().setInt.first
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }

    @Test func readingARefusedMapValueTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try CustomPersistableCreateRefusedTests.createdHolder().mapInt["1"]
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }

    @Test func initWithValueStillTrapsForANonOptionalProperty() async {
        // Realm's unmanaged object holds the Swift value: there a refused value traps at once
        // (CustomObjectCreationTests `testInitFailable`).
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefusedValueHolder(value: ["int": 1])
        }
        #expect(exitTestStandardError(result).contains("Could not convert value '1' to type 'OneRefusingInt'."))
    }
}
