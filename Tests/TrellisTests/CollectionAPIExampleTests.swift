import Foundation
import Testing
import Trellis

// Realm's List, MutableSet and Map methods as an app calls them, with the results Realm gives.

@Suite(.serialized) struct CollectionAPIExampleTests {
    private func openRealm() throws -> (Realm, URL) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("trellis-collapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let realm = try Realm(configuration: .init(fileURL: folder.appendingPathComponent("c.realm"),
                                                   objectTypes: [DocTask.self, DocProjectWithTasks.self]))
        return (realm, folder)
    }

    @Test func listEditsKeepRealmsOrder() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = DocProjectWithTasks(value: ["name": "p"])
        func task(_ name: String) -> DocTask { DocTask(value: ["name": name]) }
        try realm.write {
            realm.add(project)
            project.tasks.append(task("a"))
            project.tasks.append(objectsIn: [task("b"), task("c")])
            project.tasks.insert(task("z"), at: 0)                   // z a b c
            project.tasks.insert(contentsOf: [task("y")], at: 1)     // z y a b c
            project.tasks.move(from: 0, to: 2)                       // y a z b c
            project.tasks.swapAt(0, 1)                               // a y z b c
            project.tasks.replace(index: 1, object: task("x"))       // a x z b c
            project.tasks.replaceSubrange(2..<3, with: [task("w")])  // a x w b c
            project.tasks.remove(at: 0)                              // x w b c
            project.tasks.removeLast()                               // x w b
        }
        #expect(project.tasks.map(\.name) == ["x", "w", "b"])
        #expect(project.tasks.distinct(by: [\DocTask.name]).count == 3)
        #expect(project.tasks.sorted(by: \.name, ascending: false).map(\.name) == ["x", "w", "b"])
        #expect(Array(project.tasks.reversed()).map(\.name) == ["b", "w", "x"])
        let b = try #require(project.tasks.first(where: { $0.name == "b" }))
        #expect(project.tasks.index(of: b) == 2)
        // As in Realm, objects without a primary key are equal only to the same accessor, so
        // Swift's firstIndex(of:) does not find another accessor of the object; index(of:) does.
        #expect(project.tasks.firstIndex(of: b) == nil)
    }

    @Test func mapMergesUpdatesAndIteratesAsKeyValuePairs() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let task = DocTask(value: ["name": "t"])
        try realm.write {
            realm.add(task)
            let map = task.estimates
            map["a"] = 1
            map.updateValue(2, forKey: "b")
            map.setValue(3, forKey: "c")
            map.merge(["c": 30, "d": 4]) { _, new in new }
            map.merge([("a", 10)]) { old, _ in old }
            map.removeObject(for: "b")
        }
        var pairs: [String: Int] = [:]
        for (key, value) in task.estimates.asKeyValueSequence() {
            pairs[key] = value
        }
        #expect(pairs == ["a": 1, "c": 30, "d": 4])
        #expect(task.estimates.sum() == 35)
        #expect(task.estimates.max() == 30)
        #expect(task.estimates.contains(where: { $0.key == "d" }))
        #expect(task.estimates.sorted(ascending: true).map { $0 } == [1, 4, 30])
    }

    @Test func mutableSetAlgebraWorksOnManagedSets() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let task = DocTask(value: ["name": "t"])
        let other = DocTask(value: ["name": "o"])
        try realm.write {
            realm.add([task, other])
            task.labels.insert(objectsIn: ["x", "y", "z"])
            other.labels.insert(objectsIn: ["y", "z", "w"])
            task.labels.formIntersection(other.labels)
        }
        #expect(Set(task.labels) == ["y", "z"])
        #expect(task.labels.isSubset(of: other.labels))
        try realm.write {
            task.labels.formUnion(other.labels)
            task.labels.subtract(other.labels)
            task.labels.insert("q")
        }
        #expect(Array(task.labels) == ["q"])
        #expect(task.labels.intersects(other.labels) == false)
    }
}
