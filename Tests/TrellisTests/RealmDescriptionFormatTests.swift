import Foundation
import Testing
@testable import Trellis

/// `description` of objects and collections prints as Realm prints it (realm-swift
/// ObjectTests.testDescription, RealmCollectionTypeTests' testDescription for Results, List,
/// MutableSet, LinkingObjects and AnyRealmCollection, MapTests.testMapDescription; the format is
/// RLMObjectBase's `descriptionWithMaxDepth:` and RLMCollection's `RLMDescriptionWithMaxDepth`):
/// `Class {\n\tname = value;\n}` with Objective-C's value texts, collections as
/// `List<Class> <0x…> (\n\t[0] …\n)`, five levels deep.
@Suite struct RealmDescriptionFormatTests {
    final class DescribedTarget: Object {
        @Persisted var id = 0
        @Persisted(originProperty: "linkCol") var owners: LinkingObjects<DescribedItem>
    }

    final class DescribedItem: Object {
        @Persisted var stringCol: String?
        @Persisted var linkCol: DescribedTarget?
    }

    final class DescribedValues: Object {
        @Persisted var boolCol = false
        @Persisted var intCol = 123
        @Persisted var int8Col: Int8 = 12
        @Persisted var floatCol: Float = 1.23
        @Persisted var doubleCol = 12.3
        @Persisted var stringCol = "a"
        @Persisted var binaryCol = Data("a".utf8)
        @Persisted var dateCol = Date(timeIntervalSince1970: 1)
        @Persisted var objectIdCol = ObjectId("1234567890ab1234567890ab")
        @Persisted var uuidCol = UUID(uuidString: "137DECC8-B300-4954-A233-F89909F4FD89")!
        @Persisted var anyCol: AnyRealmValue = .none
        @Persisted var objectCol: DescribedTarget?
        @Persisted var arrayCol: List<DescribedTarget>
        @Persisted var setCol: MutableSet<DescribedTarget>
        @Persisted var mapCol: Map<String, DescribedTarget?>
    }

    final class DescribedRecursion: Object {
        @Persisted var objects: List<DescribedRecursion>
    }

    func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: "^" + pattern + "$", options: .regularExpression) != nil
    }

    func realm() throws -> (TemporaryFolder, Realm) {
        let folder = TemporaryFolder()
        let types: [ObjectBase.Type] = [DescribedTarget.self, DescribedItem.self, DescribedValues.self, DescribedRecursion.self]
        return (folder, try Realm(configuration: folder.configuration(types)))
    }

    @Test func anObjectPrintsEachPropertyAsRealmDoes() throws {
        let (_, realm) = try realm()
        let values = DescribedValues()
        values.objectCol = DescribedTarget()
        try realm.write { realm.add(values) }
        let expected = "DescribedValues \\{\n\tboolCol = 0;\n\tintCol = 123;\n\tint8Col = 12;\n\tfloatCol = 1\\.23;\n"
            + "\tdoubleCol = 12\\.3;\n\tstringCol = a;\n\tbinaryCol = <.*61.*>;\n\tdateCol = 1970-01-01 00:00:01 \\+0000;\n"
            + "\tobjectIdCol = 1234567890ab1234567890ab;\n\tuuidCol = 137DECC8-B300-4954-A233-F89909F4FD89;\n"
            + "\tanyCol = \\(null\\);\n\tobjectCol = DescribedTarget \\{\n\t\tid = 0;\n\t\\};\n"
            + "\tarrayCol = List<DescribedTarget> <0x[0-9a-f]+> \\(\n\t\n\t\\);\n"
            + "\tsetCol = MutableSet<DescribedTarget> <0x[0-9a-f]+> \\(\n\t\n\t\\);\n"
            + "\tmapCol = Map<string, DescribedTarget> <0x[0-9a-f]+> \\(\n\t\n\t\\);\n\\}"
        #expect(matches(values.description, expected), "\(values.description)")
        // Unmanaged objects print the same way.
        #expect(DescribedTarget().description == "DescribedTarget {\n\tid = 0;\n}")
    }

    @Test func collectionsPrintTheirElementsWithAnAddress() throws {
        let (_, realm) = try realm()
        let target = DescribedTarget()
        target.id = 1
        try realm.write {
            realm.add(DescribedItem(value: ["stringCol": "1", "linkCol": target]))
            realm.add(DescribedItem(value: ["stringCol": "2", "linkCol": target]))
        }
        let elements = "\\(\n\t\\[0\\] DescribedItem \\{\n\t\tstringCol = 1;\n\t\tlinkCol = DescribedTarget \\{\n\t\t\tid = 1;\n\t\t\\};\n\t\\},\n"
            + "\t\\[1\\] DescribedItem \\{\n\t\tstringCol = 2;\n\t\tlinkCol = DescribedTarget \\{\n\t\t\tid = 1;\n\t\t\\};\n\t\\}\n\\)"
        let results = realm.objects(DescribedItem.self).sorted(byKeyPath: "stringCol")
        #expect(matches(results.description, "Results<DescribedItem> <0x[0-9a-f]+> " + elements), "\(results.description)")
        #expect(matches(AnyRealmCollection(results).description, "AnyRealmCollection<DescribedItem> <0x[0-9a-f]+> " + elements))
        let owners = target.owners
        #expect(owners.description.hasPrefix("LinkingObjects<DescribedItem> <0x"))
        #expect(owners.description.contains("\t[1] DescribedItem {\n\t\tstringCol = "))

        let ints = List<Int>()
        ints.append(objectsIn: [1, 2])
        #expect(matches(ints.description, "List<int> <0x[0-9a-f]+> \\(\n\t\\[0\\] 1,\n\t\\[1\\] 2\n\\)"))
        let map = Map<String, DescribedItem?>()
        map["key3"] = DescribedItem(value: ["stringCol": "3"])
        #expect(map.description.hasPrefix("Map<string, DescribedItem>"))
        #expect(map.description.contains("[key3]: DescribedItem {\n\t\tstringCol = 3;\n\t\tlinkCol = (null);\n\t}"))
    }

    @Test func nestingStopsAtFiveLevels() throws {
        let (_, realm) = try realm()
        let object = DescribedRecursion()
        try realm.write {
            realm.add(object)
            object.objects.append(object)
        }
        let expected = "DescribedRecursion \\{\n\tobjects = List<DescribedRecursion> <0x[0-9a-f]+> \\(\n"
            + "\t\t\\[0\\] DescribedRecursion \\{\n\t\t\tobjects = List<DescribedRecursion> <0x[0-9a-f]+> \\(\n"
            + "\t\t\t\t\\[0\\] DescribedRecursion \\{\n\t\t\t\t\tobjects = <Maximum depth exceeded>;\n"
            + "\t\t\t\t\\}\n\t\t\t\\);\n\t\t\\}\n\t\\);\n\\}"
        #expect(matches(object.description, expected), "\(object.description)")
    }
}
