import Foundation
import Testing
import Trellis

// Code in the style of Realm Swift's own documentation (Quick Start, CRUD, React to Changes,
// Threading, Configure & Open), compiled and run unchanged but for the import. A line here that
// stops compiling is a Realm app that stops porting.

enum DocTaskStatus: String, PersistableEnum {
    case notStarted
    case inProgress
    case complete
}

final class DocTodo: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var status = DocTaskStatus.notStarted
    @Persisted var ownerId: String
    @Persisted var tags: MutableSet<String>
    @Persisted var ratingsByReviewer: Map<String, Int>
    @Persisted var companion: AnyRealmValue

    convenience init(name: String, ownerId: String) {
        self.init()
        self.name = name
        self.ownerId = ownerId
    }
}

final class DocProject: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var todos: List<DocTodo>
}

@Suite(.serialized) struct RealmDocumentationExampleTests {
    private func openRealm() throws -> (Realm, URL) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("trellis-docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var config = Realm.Configuration(objectTypes: [DocTodo.self, DocProject.self])
        config.fileURL = folder.appendingPathComponent("default.realm")
        config.fileURL!.deleteLastPathComponent()
        config.fileURL!.appendPathComponent("myRealm")
        config.fileURL!.appendPathExtension("realm")
        return (try Realm(configuration: config), folder)
    }

    @Test func quickStartCrudRunsAsDocumented() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(realm.configuration.fileURL?.lastPathComponent == "myRealm.realm")

        let todo = DocTodo(name: "Do laundry", ownerId: "me")
        try realm.write {
            realm.add(todo)
        }
        let todos = realm.objects(DocTodo.self)
        let todosInProgress = todos.where { $0.status == .inProgress }
        #expect(todosInProgress.isEmpty)

        var seen: [String] = []
        let token = todos.observe { (changes: RealmCollectionChange) in
            switch changes {
            case .initial:
                seen.append("initial")
            case .update(_, let deletions, let insertions, let modifications):
                seen.append("update \(deletions) \(insertions) \(modifications)")
            case .error(let error):
                Issue.record("\(error)")
            }
        }
        defer { token.invalidate() }

        let todoToUpdate = todos[0]
        try realm.write {
            todoToUpdate.status = .inProgress
        }
        realm.refresh()
        #expect(todosInProgress.count == 1)
        #expect(todosInProgress.first?.name == "Do laundry")

        try realm.write {
            realm.delete(todoToUpdate)
        }
        #expect(todos.isEmpty)
        #expect(todoToUpdate.isInvalidated)
        #expect(seen.first == "initial")
    }

    @Test func objectKeyIdentifiableGivesTheSameIdToEveryAccessorOfAnObject() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = DocTodo(name: "a", ownerId: "me")
        let second = DocTodo(name: "b", ownerId: "me")
        #expect(first.id != second.id)
        try realm.write { realm.add([first, second]) }
        let again = try #require(realm.object(ofType: DocTodo.self, forPrimaryKey: first._id))
        #expect(again.id == first.id)
        #expect(again.id != second.id)
        let ids = Set(realm.objects(DocTodo.self).map(\.id))
        #expect(ids.count == 2)
    }

    @Test func setsMapsAndMixedValuesWorkAsDocumented() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let todo = DocTodo(name: "Walk", ownerId: "me")
        try realm.write {
            realm.add(todo)
            todo.tags.insert(objectsIn: ["home", "daily"])
            todo.ratingsByReviewer["ana"] = 5
            todo.ratingsByReviewer["tim"] = 3
            todo.companion = .string("Fluffy")
        }
        #expect(todo.tags.contains("home"))
        #expect(todo.ratingsByReviewer["ana"] == 5)
        #expect(Set(todo.ratingsByReviewer.keys) == ["ana", "tim"])
        for element in todo.ratingsByReviewer {
            #expect(element.value == (element.key == "ana" ? 5 : 3))
        }
        switch todo.companion {
        case .string(let name):
            #expect(name == "Fluffy")
        default:
            Issue.record("companion should be a string")
        }
        let rated = realm.objects(DocTodo.self).filter("ANY ratingsByReviewer.@keys == %@", "tim")
        #expect(rated.count == 1)
        // The NSPredicate spellings Realm Swift's documentation uses work too.
        #expect(realm.objects(DocTodo.self).filter("ANY ratingsByReviewer.@allKeys == 'ana'").count == 1)
        #expect(realm.objects(DocTodo.self).filter("ANY ratingsByReviewer.@values > 4").count == 1)
        #expect(realm.objects(DocTodo.self).filter("ANY ratingsByReviewer.@values > 5").isEmpty)
        try realm.write {
            todo.ratingsByReviewer.removeObject(for: "tim")
        }
        #expect(todo.ratingsByReviewer["tim"] == nil)
    }

    @Test func sortingFilteringAndAggregatesWorkAsDocumented() throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        try realm.write {
            for (index, name) in ["Bo", "Al", "Cy"].enumerated() {
                let todo = realm.create(DocTodo.self, value: ["name": name, "ownerId": "o\(index)"])
                todo.ratingsByReviewer["x"] = index
            }
        }
        let todos = realm.objects(DocTodo.self)
        #expect(todos.sorted(byKeyPath: "name", ascending: false).map(\.name) == ["Cy", "Bo", "Al"])
        let byDescriptors = todos.sorted(by: [SortDescriptor(keyPath: "ownerId", ascending: false)])
        #expect(byDescriptors.first?.name == "Cy")
        #expect(todos.sorted(by: \.name, ascending: true).first?.name == "Al")
        #expect(todos.filter("name BEGINSWITH %@", "B").count == 1)
        #expect(todos.filter("%K == %@", "name", "Cy").count == 1)
        #expect(todos.where { $0.name.contains("o", options: .caseInsensitive) }.count == 1)
        #expect(todos.where { $0.name.in(["Al", "Cy"]) }.count == 2)
        #expect(todos.distinct(by: ["status"]).count == 1)
    }

    @Test func threadSafeReferencesAndFrozenObjectsCrossThreadsAsDocumented() async throws {
        let (realm, folder) = try openRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = DocProject(value: ["name": "Home"])
        try realm.write { realm.add(project) }
        let config = realm.configuration
        let reference = ThreadSafeReference(to: project)
        let frozen = project.freeze()
        let name: String? = await Task.detached {
            let background = try? Realm(configuration: config)
            #expect(frozen.isFrozen)
            #expect(frozen.name == "Home")
            return background?.resolve(reference)?.name
        }.value
        #expect(name == "Home")
    }
}
