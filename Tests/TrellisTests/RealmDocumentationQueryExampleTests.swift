import Foundation
import Testing
import Trellis

// The typed and text queries of Realm Swift's "Filter Data" page, run unchanged but for the
// import, each checked against the answer a plain Swift filter gives.

final class DocTask: Object {
    @Persisted var name = ""
    @Persisted var assignee: String?
    @Persisted var priority = 0
    @Persisted var progressMinutes = 0
    @Persisted var isComplete = false
    @Persisted var isInProgress = false
    @Persisted var labels: MutableSet<String>
    @Persisted var estimates: Map<String, Int>
    @Persisted var dueDate: Date?
}

final class DocProjectWithTasks: Object {
    @Persisted var name = ""
    @Persisted var tasks: List<DocTask>
}

@Suite(.serialized) struct RealmDocumentationQueryExampleTests {
    private func seededRealm() throws -> (Realm, URL) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("trellis-docq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let realm = try Realm(configuration: .init(fileURL: folder.appendingPathComponent("q.realm"),
                                                   objectTypes: [DocTask.self, DocProjectWithTasks.self]))
        let names = ["Ali", "Jamie", nil, "Alex"]
        try realm.write {
            for projectIndex in 0..<6 {
                let project = DocProjectWithTasks(value: ["name": ["Exhibit", "edge", "Picnic", "Bike",
                                                                   "Home", "Tree"][projectIndex]])
                for taskIndex in 0..<(projectIndex + 1) {
                    let seed = projectIndex * 7 + taskIndex * 3
                    let task = DocTask(value: [
                        "name": "task \(projectIndex).\(taskIndex)",
                        "assignee": names[seed % 4] as Any,
                        "priority": seed % 10,
                        "progressMinutes": (seed * 17) % 150,
                        "isComplete": seed % 3 == 0,
                        "isInProgress": seed % 3 == 1,
                    ])
                    task.labels.insert(objectsIn: seed % 2 == 0 ? ["home"] : ["work", "urgent"])
                    task.estimates["ali"] = seed % 5
                    task.dueDate = seed % 4 == 0 ? nil : Date(timeIntervalSince1970: Double(seed) * 86_400)
                    project.tasks.append(task)
                }
                realm.add(project)
            }
        }
        return (realm, folder)
    }

    @Test func typedQueriesOnTasksMatchAPlainSwiftFilter() throws {
        let (realm, folder) = try seededRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tasks = realm.objects(DocTask.self)
        let all = Array(tasks)
        func check(_ results: Results<DocTask>, _ expected: (DocTask) -> Bool,
                   sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(Set(results.map(\.name)) == Set(all.filter(expected).map(\.name)),
                    sourceLocation: sourceLocation)
        }
        check(tasks.where { $0.priority > 5 }) { $0.priority > 5 }
        check(tasks.where { $0.progressMinutes >= 120 }) { $0.progressMinutes >= 120 }
        check(tasks.where { $0.assignee == nil }) { $0.assignee == nil }
        check(tasks.where { $0.assignee == "Ali" || $0.assignee == "Jamie" }) {
            $0.assignee == "Ali" || $0.assignee == "Jamie"
        }
        check(tasks.where { $0.progressMinutes.contains(30...60) }) { (30...60).contains($0.progressMinutes) }
        check(tasks.where { $0.isInProgress }) { $0.isInProgress }
        check(tasks.where { $0.assignee == "Ali" && $0.isComplete }) { $0.assignee == "Ali" && $0.isComplete }
        check(tasks.where { !$0.isComplete }) { !$0.isComplete }
        check(tasks.where { $0.labels.contains("urgent") }) { $0.labels.contains("urgent") }
        check(tasks.where { $0.labels.containsAny(in: ["home", "nothing"]) }) { $0.labels.contains("home") }
        check(tasks.where { $0.estimates["ali"] == 2 }) { $0.estimates["ali"] == 2 }
        check(tasks.where { $0.estimates.keys.contains("ali") }) { _ in true }
        check(tasks.where { $0.estimates.contains(4) }) { $0.estimates["ali"] == 4 }
        check(tasks.where { $0.estimates.values == 4 }) { $0.estimates["ali"] == 4 }
        check(tasks.where { $0.estimates.containsAny(in: [0, 4]) }) { [0, 4].contains($0.estimates["ali"]) }
        check(tasks.where { $0.estimates.max >= 3 && $0.estimates.min >= 3 }) { ($0.estimates["ali"] ?? 0) >= 3 }
        check(tasks.where { $0.estimates.sum == 2 || $0.estimates.avg == 1 }) {
            [1, 2].contains($0.estimates["ali"])
        }
        check(tasks.where { $0.priority < $0.progressMinutes }) { $0.priority < $0.progressMinutes }
        check(tasks.where { $0.priority == $0.progressMinutes }) { $0.priority == $0.progressMinutes }
        check(tasks.where { $0.name.contains($0.name) }) { _ in true }
        check(tasks.where { $0.estimates.contains(1...2) }) { (1...2).contains($0.estimates["ali"] ?? -1) }
        check(tasks.where { $0.priority.contains(1..<3) }) { (1..<3).contains($0.priority) }
        check(tasks.where { $0.name.equals("TASK 1.1", options: [.caseInsensitive]) }) { $0.name == "task 1.1" }
        check(tasks.where { $0.name.notEquals("task 1.1") }) { $0.name != "task 1.1" }
        let cutoff = Date(timeIntervalSince1970: 20 * 86_400)
        check(tasks.where { $0.dueDate > cutoff }) { ($0.dueDate ?? .distantPast) > cutoff }
        check(tasks.where { $0.name.starts(with: "task 3") }) { $0.name.hasPrefix("task 3") }
        check(tasks.where { $0.name.ends(with: ".0") }) { $0.name.hasSuffix(".0") }
        check(tasks.where { $0.name.like("task ?.1*") }) {
            $0.name.count >= 8 && $0.name.hasPrefix("task ") && Array($0.name)[6...7] == [".", "1"]
        }
        check(tasks.filter("priority BETWEEN {2, 4}")) { (2...4).contains($0.priority) }
        check(tasks.filter("assignee IN %@", ["Ali", "Alex"])) { ["Ali", "Alex"].contains($0.assignee ?? "") }
    }

    @Test func typedQueriesThroughListsMatchAPlainSwiftFilter() throws {
        let (realm, folder) = try seededRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let projects = realm.objects(DocProjectWithTasks.self)
        let all = Array(projects)
        func check(_ results: Results<DocProjectWithTasks>, _ expected: (DocProjectWithTasks) -> Bool,
                   sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(Set(results.map(\.name)) == Set(all.filter(expected).map(\.name)),
                    sourceLocation: sourceLocation)
        }
        func priorities(_ project: DocProjectWithTasks) -> [Int] { project.tasks.map(\.priority) }
        check(projects.where { $0.tasks.assignee == "Ali" }) { $0.tasks.contains { $0.assignee == "Ali" } }
        check(projects.where { $0.name.contains("ie", options: .caseInsensitive) }) {
            $0.name.lowercased().contains("ie")
        }
        check(projects.where { $0.name.starts(with: "e", options: .caseInsensitive) }) {
            $0.name.lowercased().hasPrefix("e")
        }
        check(projects.where { $0.name.ends(with: "e") }) { $0.name.hasSuffix("e") }
        check(projects.where { $0.name.like("e*", caseInsensitive: true) }) { $0.name.lowercased().hasPrefix("e") }
        check(projects.where { $0.tasks.priority.avg > 5 }) {
            let values = priorities($0)
            return !values.isEmpty && Double(values.reduce(0, +)) / Double(values.count) > 5
        }
        check(projects.where { $0.tasks.priority.max < 5 }) { (priorities($0).max() ?? Int.min) < 5 }
        check(projects.where { $0.tasks.priority.min > 5 }) { (priorities($0).min() ?? Int.max) > 5 }
        check(projects.where { $0.tasks.count > 3 }) { $0.tasks.count > 3 }
        check(projects.where { $0.tasks.progressMinutes.sum > 300 }) {
            $0.tasks.map(\.progressMinutes).reduce(0, +) > 300
        }
        check(projects.where { ($0.tasks.isComplete == false && $0.tasks.assignee == "Alex").count > 0 }) {
            $0.tasks.contains { !$0.isComplete && $0.assignee == "Alex" }
        }
        check(projects.where { ($0.tasks.priority >= 5).count > 1 }) {
            $0.tasks.filter { $0.priority >= 5 }.count > 1
        }
        check(projects.filter("SUBQUERY(tasks, $task, $task.isComplete == false AND $task.assignee == 'Alex').@count > 0")) {
            $0.tasks.contains { !$0.isComplete && $0.assignee == "Alex" }
        }
        check(projects.filter("ANY tasks.labels == 'urgent'")) {
            $0.tasks.contains { $0.labels.contains("urgent") }
        }
    }
}
