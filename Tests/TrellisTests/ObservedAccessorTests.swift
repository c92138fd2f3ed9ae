import Foundation
import Testing
@testable import Trellis

/// A model whose collections a projection forwards (Realm's ProjectionTests
/// .testAllPropertyTypesNotifications observes each through `AllTypesPrimitiveProjection`).
class ObservedBag: Object {
    @Persisted var int8Col: Int8 = 0
    @Persisted var arrayInt: List<Int>
    @Persisted var setInt: MutableSet<Int>
    @Persisted var mapInt: Map<String, Int>
}

final class ObservedBagView: Projection<ObservedBag> {
    @Projected(\ObservedBag.int8Col) var int8Col
    @Projected(\ObservedBag.arrayInt) var arrayInt
    @Projected(\ObservedBag.setInt) var setInt
    @Projected(\ObservedBag.mapInt) var mapInt
}

/// An object observed on its own thread is handed to the block itself, as Realm's
/// ObjectChangeCallbackWrapper hands the observed RLMObjectBase: the block sees the accessor the
/// program observed, whatever static type it was observed through (Realm's MixedCollectionTest
/// observes an `AnyRealmTypeObject` typed `Object`), and a collection property read from it in
/// the block is the one the change reports.
@Suite struct ObservedAccessorTests {
    let folder = TemporaryFolder()

    @Test func anObjectObservedOnItsThreadIsHandedToTheBlockItself() throws {
        let realm = try Realm(configuration: folder.configuration([ObservedBag.self]))
        let bag = ObservedBag()
        try realm.write { realm.add(bag) }
        let handed = LockedBox<[ObjectBase]>([])
        let token = bag.observe { change in
            if case .change(let object, _) = change { handed.mutate { $0.append(object) } }
        }
        try realm.write { bag.int8Col = 3 }
        realm.refresh()
        token.invalidate()
        #expect(handed.get().count == 1)
        #expect(handed.get().first === bag)
    }

    /// The harness crashed here: the observer made an accessor of the static type (`Object`),
    /// then bound the subclass's legacy `RealmProperty` field at an offset `Object` lacks.
    @Test func anObjectObservedThroughItsSuperclassReportsItsNestedChanges() throws {
        let realm = try Realm(configuration: folder.configuration([PropertyMixedHolder.self]))
        let holder = PropertyMixedHolder()
        try realm.write { realm.add(holder) }
        let observed: Object = holder
        let edits: [() -> Void] = [
            { holder.anyValue.value = .fromDictionary(["key0": .fromArray([.int(1)])]) },
            { holder.anyValue.value.dictionaryValue?["key0"]?.listValue?.append(.float(33.33)) },
            { holder.anyValue.value.dictionaryValue?["key0"]?.listValue?[0] = .bool(true) },
            { holder.anyValue.value.dictionaryValue?.removeAll() },
        ]
        for (step, edit) in edits.enumerated() {
            let heard = LockedBox<[String]>([])
            let token = observed.observe { (change: ObjectChange<ObjectBase>) in
                if case .change(let object, let properties) = change {
                    #expect(object is PropertyMixedHolder)
                    heard.mutate { $0.append(properties.map(\.name).joined(separator: ",")) }
                }
            }
            try realm.write { edit() }
            realm.refresh()
            token.invalidate()
            #expect(heard.get() == ["anyValue"], "edit \(step)")
        }
    }

    /// The same on a queue: the queue's accessor is of the object's class.
    @Test func anObjectObservedThroughItsSuperclassOnAQueueIsHandedItsClass() throws {
        let realm = try Realm(configuration: folder.configuration([PropertyMixedHolder.self]))
        let holder = PropertyMixedHolder()
        try realm.write { realm.add(holder) }
        let observed: Object = holder
        let queue = DispatchQueue(label: "observed-accessor")
        let heard = LockedBox<[String]>([])
        let delivered = DispatchSemaphore(value: 0)
        let token = observed.observe(on: queue) { (change: ObjectChange<ObjectBase>) in
            if case .change(let object, let properties) = change {
                heard.mutate { $0.append("\(type(of: object)) \(properties.map(\.name))") }
                delivered.signal()
            }
        }
        queue.sync {}  // registered
        try realm.write { holder.anyValue.value = .fromArray([.int(1)]) }
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        token.invalidate()
        #expect(heard.get() == ["PropertyMixedHolder [\"anyValue\"]"])
    }

    /// A change inside a nested collection held by a `List<AnyRealmValue>` element or a
    /// `Map<String, AnyRealmValue>` value is a change of that element or value: the object's
    /// observers hear the property, the collection's observers a modification.
    @Test func aChangeInsideACollectionHeldByAListOrAMapNotifiesTheObjectAndTheCollection() throws {
        let realm = try Realm(configuration: folder.configuration([MixedHolder.self, MixedTarget.self]))
        let holder = MixedHolder()
        holder.anyList.append(objectsIn: [.int(0), .fromArray([.int(1)])])
        holder.anyMap["k"] = .fromDictionary(["x": .int(1)])
        try realm.write { realm.add(holder) }
        let objectHeard = LockedBox<[String]>([])
        let listHeard = LockedBox<[String]>([])
        let mapHeard = LockedBox<[String]>([])
        let objectToken = holder.observe { change in
            if case .change(_, let properties) = change { objectHeard.mutate { $0.append(properties.map(\.name).joined()) } }
        }
        let listToken = holder.anyList.observe { change in
            if case .update(_, let d, let i, let m) = change { listHeard.mutate { $0.append("d\(d) i\(i) m\(m)") } }
        }
        let mapToken = holder.anyMap.observe { change in
            if case .update(_, let d, let i, let m) = change { mapHeard.mutate { $0.append("d\(d) i\(i) m\(m)") } }
        }
        realm.refresh()
        try realm.write { holder.anyList[1].listValue?.append(.string("two")) }
        realm.refresh()
        try realm.write { holder.anyMap["k"]?.dictionaryValue?["y"] = .bool(true) }
        realm.refresh()
        objectToken.invalidate()
        listToken.invalidate()
        mapToken.invalidate()
        #expect(objectHeard.get() == ["anyList", "anyMap"])
        #expect(listHeard.get() == ["d[] i[] m[1]"])
        #expect(mapHeard.get() == ["d[] i[] m[\"k\"]"])
    }

    /// Realm's ProjectionTests.testAllPropertyTypesNotifications, for its collections: the new
    /// value a projection's observer reports for a collection property is the collection the
    /// projection handed to the block reads (`XCTAssertIdentical`), holding the new element; a
    /// change of another property (`int8Col`) is filtered out by the key path.
    @Test func aProjectedCollectionChangeReportsTheCollectionTheProjectionReads() throws {
        let realm = try Realm(configuration: folder.configuration([ObservedBag.self]))
        let bag = ObservedBag()
        bag.arrayInt.append(objectsIn: [1, 2])
        bag.setInt.insert(objectsIn: [1, 2])
        bag.mapInt["0"] = 0
        try realm.write { realm.add(bag) }
        let view = try #require(realm.objects(ObservedBagView.self).first)

        func observe(_ keyPath: PartialKeyPath<ObservedBagView>, _ name: String, _ edit: @escaping () -> Void,
                     check: @escaping (ObservedBagView, Any?) -> Bool) throws
        {
            let heard = LockedBox<[String]>([])
            let token = view.observe(keyPaths: [keyPath]) { change in
                guard case .change(let object, let properties) = change else { return }
                for property in properties {
                    heard.mutate { $0.append("\(property.name) \(property.oldValue == nil) \(check(object, property.newValue))") }
                }
            }
            try realm.write {
                bag.int8Col += 1
                edit()
            }
            realm.refresh()
            token.invalidate()
            #expect(heard.get() == ["\(name) true true"])
        }
        try observe(\ObservedBagView.arrayInt, "arrayInt", { bag.arrayInt.append(3) }) { object, new in
            guard let list = new as? List<Int> else { return false }
            return list === object.arrayInt && Array(list) == [1, 2, 3]
        }
        try observe(\ObservedBagView.setInt, "setInt", { bag.setInt.insert(3) }) { object, new in
            guard let set = new as? MutableSet<Int> else { return false }
            return set === object.setInt && Set(set) == [1, 2, 3]
        }
        try observe(\ObservedBagView.mapInt, "mapInt", { bag.mapInt["1"] = 1 }) { object, new in
            guard let map = new as? Map<String, Int> else { return false }
            return map === object.mapInt && map["1"] == 1 && map.count == 2
        }
    }
}
