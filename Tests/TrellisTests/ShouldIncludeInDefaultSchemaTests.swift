import Foundation
import Testing
@testable import Trellis

/// A class only Realms listing it hold (`shouldIncludeInDefaultSchema()` false).
final class DSHiddenNote: Object {
    override class func shouldIncludeInDefaultSchema() -> Bool { false }
    @Persisted var text = ""
}

/// Realm's `shouldIncludeInDefaultSchema()`: a class returning false is left out of the default
/// schema (a Realm opened without `objectTypes`) and is held by a Realm that lists it.
@Suite struct ShouldIncludeInDefaultSchemaTests {
    @Test func modelClassesAreInTheDefaultSchemaAndDynamicObjectIsNot() {
        #expect(Dog.shouldIncludeInDefaultSchema())
        #expect(WrappedCounter.shouldIncludeInDefaultSchema())
        #expect(!DynamicObject.shouldIncludeInDefaultSchema())
        #expect(!DSHiddenNote.shouldIncludeInDefaultSchema())
    }

    @Test func aClassReturningFalseIsLeftOutOfTheDefaultSchema() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "hidden-default-\(UUID().uuidString)"))
        #expect(realm.schema["DSHiddenNote"] == nil)
        #expect(realm.schema["AllTypes"] != nil)
    }

    @Test func aRealmListingTheClassHoldsIt() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "hidden-listed-\(UUID().uuidString)",
                                                   objectTypes: [DSHiddenNote.self]))
        #expect(realm.schema["DSHiddenNote"] != nil)
        try realm.write { realm.add(DSHiddenNote(value: ["text": "kept"])) }
        #expect(realm.objects(DSHiddenNote.self).first?.text == "kept")
    }

    @Test func usingTheClassInARealmWithoutObjectTypesTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try Realm(configuration: .init(inMemoryIdentifier: "hidden-used"))
            try realm.write { realm.add(DSHiddenNote()) }
        }
        #expect(exitTestStandardError(result).contains("Object type 'DSHiddenNote' is not managed by the Realm."))
        await #expect(processExitsWith: .failure) {
            let realm = try Realm(configuration: .init(inMemoryIdentifier: "hidden-read"))
            _ = realm.objects(DSHiddenNote.self).count
        }
    }
}
