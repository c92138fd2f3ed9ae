import Foundation
import Testing
@testable import Trellis

class RatedTask: Object {
    @Persisted var name = ""
    @Persisted var ratings: MutableSet<Int>
    @Persisted var tags: List<String>
    @Persisted var scores: Map<String, Int>
}

class RatedProject: Object {
    @Persisted var name = ""
    @Persisted var tasks: List<RatedTask>
}

/// Typed queries through a collection of objects into their collections of values.
@Suite struct NestedCollectionQueryTests {
    let folder = TemporaryFolder()

    func projects() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([RatedProject.self, RatedTask.self]))
        try realm.write {
            let high = RatedProject(value: ["name": "high"])
            let task = RatedTask(value: ["name": "t1"])
            task.ratings.insert(objectsIn: [1, 5])
            task.tags.append("x")
            task.scores["a"] = 9
            high.tasks.append(task)
            let low = RatedProject(value: ["name": "low"])
            let other = RatedTask(value: ["name": "t2"])
            other.ratings.insert(2)
            other.tags.append("y")
            other.scores["a"] = 1
            low.tasks.append(other)
            realm.add([high, low])
        }
        return realm
    }

    @Test func comparisonsReachIntoNestedCollections() throws {
        let realm = try projects()
        let projects = realm.objects(RatedProject.self)
        #expect(Array(projects.where { $0.tasks.ratings > 3 }).map(\.name) == ["high"])
        #expect(Array(projects.where { $0.tasks.tags.contains("y") }).map(\.name) == ["low"])
        #expect(Array(projects.where { $0.tasks.scores.values > 5 }).map(\.name) == ["high"])
        #expect(Array(projects.filter("ANY tasks.ratings > 3")).map(\.name) == ["high"])
    }
}
