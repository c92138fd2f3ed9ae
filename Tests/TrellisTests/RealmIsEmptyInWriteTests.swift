import Foundation
import Testing
import Trellis

final class FirstOfItsClass: Object {
    @Persisted var name = ""
}

/// `Realm.isEmpty` sees the current write transaction: an object created in it makes the Realm
/// not empty, and cancelling the write makes it empty again (Realm's RealmTests.testIsEmpty).
/// Before, an object of a class whose table the write itself created was not seen: isEmpty
/// read only the classes already in the file.
@Suite struct RealmIsEmptyInWriteTests {
    @Test(arguments: [false, true]) func anObjectCreatedInTheWriteIsSeen(listingTheClass: Bool) throws {
        let folder = TemporaryFolder()
        // Without objectTypes (the default schema, as Realm's test uses) a class's table is
        // made by the first write that meets it.
        let types: [ObjectBase.Type]? = listingTheClass ? [FirstOfItsClass.self] : nil
        let realm = try Realm(configuration: folder.configuration(types, name: "empty.realm"))
        #expect(realm.isEmpty)
        realm.beginWrite()
        realm.create(FirstOfItsClass.self, value: ["a"])
        #expect(!realm.isEmpty)
        realm.cancelWrite()
        #expect(realm.isEmpty)
        try realm.write { realm.create(FirstOfItsClass.self, value: ["b"]) }
        #expect(!realm.isEmpty)
    }
}
