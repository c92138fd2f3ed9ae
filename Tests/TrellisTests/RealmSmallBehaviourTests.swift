import Foundation
import Testing
@testable import Trellis

/// Realm's legacy primary key declaration on a `@Persisted` model (its
/// ModernLinkToPrimaryStringObject / SwiftLinkToPrimaryStringObject).
class LegacyKeyedString: Object {
    @Persisted var stringCol = ""
    @Persisted var intCol = 0
    override class func primaryKey() -> String? { "stringCol" }
}

class LegacyKeyedLink: Object {
    @Persisted var pk = ""
    @Persisted var object: LegacyKeyedString?
    @Persisted var objects: List<LegacyKeyedString>
    override class func primaryKey() -> String? { "pk" }
}

class TaggedThing: Object {
    @Persisted var name = ""
    @Persisted var tags: Map<String, Int>
    @Persisted var scores: List<Double?>
    @Persisted var numbers: List<Int>
}

class ThingOwner: Object {
    @Persisted var name = ""
    @Persisted var thing: TaggedThing?
}

/// Small answers of Realm's that Trellis gave differently (issue 40), each from Realm's tests.
@Suite struct RealmSmallBehaviourTests {
    let folder = TemporaryFolder()

    func realm(_ types: [ObjectBase.Type]) throws -> Realm {
        try Realm(configuration: folder.configuration(types))
    }

    /// ObjectCreationTests.testUpdateWithNestedObjects / testUpdateChangedWithNestedObjects.
    @Test func aPrimaryKeyOverrideIsHonouredOnNestedUpdates() throws {
        let realm = try realm([LegacyKeyedString.self, LegacyKeyedLink.self])
        #expect(realm.schema["LegacyKeyedString"]?.primaryKeyProperty?.name == "stringCol")
        for update in [Realm.UpdatePolicy.all, .modified] {
            let standalone = LegacyKeyedString(value: ["primary", 11])
            let object = try realm.write {
                realm.create(LegacyKeyedLink.self, value: ["otherPrimary", ["primary", 12] as [Any], [["primary", 12] as [Any]]],
                             update: update)
            }
            #expect(realm.objects(LegacyKeyedString.self).count == 1)
            let persisted = try #require(object.object)
            #expect(persisted.intCol == 12)
            #expect(standalone.realm == nil)
            #expect(object.objects.first == persisted)
        }
        #expect(realm.object(ofType: LegacyKeyedString.self, forPrimaryKey: "primary")?.intCol == 12)
    }

    /// MapTests.testAllKeysQuery, and the same through a link to the object holding the map.
    @Test func anyAllKeysOfAMapMatchesDirectlyAndThroughALink() throws {
        let realm = try realm([TaggedThing.self, ThingOwner.self])
        try realm.write {
            for (name, keys) in [("a", ["aKey"]), ("b", ["aKey2"]), ("c", ["aKey3"]), ("d", ["aKey", "aKey4"])] {
                let thing = TaggedThing(value: ["name": name])
                for key in keys { thing.tags[key] = 1 }
                realm.add(ThingOwner(value: ["name": name, "thing": thing]))
            }
        }
        let things = realm.objects(TaggedThing.self)
        #expect(things.filter("ANY tags.@allKeys = 'aKey'").count == 2)
        #expect(things.filter("ANY tags.@allKeys != 'aKey'").count == 3)
        #expect(things.filter("ANY tags.@allKeys =[c] 'akey'").count == 2)
        let owners = realm.objects(ThingOwner.self)
        #expect(owners.filter("ANY thing.tags.@allKeys = 'aKey'").map(\.name).sorted() == ["a", "d"])
        #expect(owners.filter("ANY thing.tags.@allKeys != 'aKey'").count == 3)
    }

    @Test func selfInAListOfObjectsSelectsThoseObjects() throws {
        let realm = try realm([TaggedThing.self, ThingOwner.self])
        try realm.write { for name in ["a", "b", "c"] { realm.add(TaggedThing(value: ["name": name])) } }
        let picked = Array(realm.objects(TaggedThing.self).filter("name != 'b'"))
        #expect(realm.objects(TaggedThing.self).filter("SELF IN %@", picked).map(\.name).sorted() == ["a", "c"])
        #expect(realm.objects(TaggedThing.self).filter("self IN %@", realm.objects(TaggedThing.self).filter("name == 'b'"))
            .map(\.name) == ["b"])
        #expect(realm.objects(TaggedThing.self).filter("SELF == %@", picked[0]).count == 1)
    }

    /// `List<Double?>.average()` compiles and averages the non-nil values, as in Realm.
    @Test func averageOfAListOfOptionalDoublesIsNotAmbiguous() throws {
        let realm = try realm([TaggedThing.self, ThingOwner.self])
        let thing = TaggedThing()
        thing.scores.append(objectsIn: [1.0, nil, 2.0])
        #expect(thing.scores.average() == 1.5)
        try realm.write { realm.add(thing) }
        let average: Double? = thing.scores.average()
        #expect(average == 1.5)
    }

    /// Realm states `sorted(ascending:)` and `distinct()` for `Element.PersistedType:
    /// SortableType`: generic code constrained only that way compiles.
    static func sortedDistinct<C: RealmCollection>(_ collection: C) -> (Results<C.Element>, Results<C.Element>)
        where C.Element.PersistedType: SortableType
    {
        (collection.sorted(ascending: false), collection.distinct())
    }

    @Test func sortedAndDistinctWorkUnderThePersistedTypeConstraint() throws {
        let realm = try realm([TaggedThing.self, ThingOwner.self])
        let thing = TaggedThing()
        thing.numbers.append(objectsIn: [3, 1, 3, 2])
        try realm.write { realm.add(thing) }
        let (sorted, distinct) = Self.sortedDistinct(thing.numbers)
        #expect(Array(sorted) == [3, 3, 2, 1])
        #expect(Array(distinct) == [3, 1, 2])
        #expect(Array(thing.numbers.sorted()) == [1, 2, 3, 3])
    }

    @Test func distinctBySelfOnValuesKeepsTheFirstOfEach() throws {
        let realm = try realm([TaggedThing.self, ThingOwner.self])
        let thing = TaggedThing()
        thing.numbers.append(objectsIn: [3, 1, 3, 2, 1])
        try realm.write { realm.add(thing) }
        #expect(Array(thing.numbers.distinct(by: ["self"])) == [3, 1, 2])
        #expect(Array(realm.objects(TaggedThing.self).first!.numbers.distinct(by: ["self"]).sorted()) == [1, 2, 3])
    }

    /// GeospatialTests' `GEOWITHIN` keyword in query text.
    @Test func geoWithinIsAKeywordOfQueryText() throws {
        let realm = try Realm(configuration: folder.configuration([TextQueryGeoPlace.self, TextQueryGeoLocation.self]))
        try realm.write {
            realm.add(TextQueryGeoPlace(value: ["name": "in", "location": ["coordinates": [0.5, 0.5]]]))
            realm.add(TextQueryGeoPlace(value: ["name": "out", "location": ["coordinates": [20.0, 20.0]]]))
        }
        let box = try #require(GeoBox(bottomLeft: (0, 0), topRight: (1, 1)))
        #expect(realm.objects(TextQueryGeoPlace.self).filter("location GEOWITHIN %@", box).map(\.name) == ["in"])
        #expect(realm.objects(TextQueryGeoPlace.self).filter("location geoWithin %@", box).count == 1)
    }

    /// MigrationTests: `oldObject["int8Col"] as! Int8` (Realm hands integers out as NSNumber).
    @Test func aMigrationReadsIntegersAsAnySizeAndWritesThemBack() throws {
        let url = folder.file("sized.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [SizedBefore.self]))
            try realm.write { realm.add(SizedBefore(value: ["int8Col": 1, "count": 40])) }
        }
        let seen = LockedBox<[String]>([])
        let configuration = Realm.Configuration(fileURL: url, schemaVersion: 1, migrationBlock: { migration, _ in
            migration.enumerateObjects(ofType: "SizedBefore") { old, new in
                guard let old, let new else { return }
                let small = old["int8Col"] as! Int8
                let plain = old["count"] as! Int
                seen.mutate { $0.append("\(small) \(plain)") }
                new["int8Col"] = old["int8Col"]
                new["count"] = plain + 2
            }
        }, objectTypes: [SizedBefore.self])
        let object = try onOtherThread { try Realm(configuration: configuration).objects(SizedBefore.self).first.map { "\($0.int8Col) \($0.count)" } }
        #expect(seen.get() == ["1 40"])
        #expect(object == "1 42")
    }
}

class SizedBefore: Object {
    @Persisted var int8Col: Int8 = 0
    @Persisted var count = 0
}

class TextQueryGeoLocation: EmbeddedObject {
    @Persisted private var type = "Point"
    @Persisted var coordinates: List<Double>
}

class TextQueryGeoPlace: Object {
    @Persisted var name = ""
    @Persisted var location: TextQueryGeoLocation?
}
