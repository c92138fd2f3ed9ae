import Foundation
import Testing
@testable import Trellis

/// Two processes on one file: commits of one are visible to the other, snapshots are isolated.
@Suite struct ProcessTests {
    let folder = TemporaryFolder()

    @Test func anotherProcessSeesCommittedObjects() throws {
        let url = folder.file()
        #expect(try runHelper(["write", url.path, "25"]) == "wrote 25")
        let count = try onOtherThread {
            try Realm(configuration: .init(fileURL: url, objectTypes: [ProcessDog.self])).objects(ProcessDog.self).count
        }
        #expect(count == 25)
        #expect(try runHelper(["count", url.path]) == "25")
    }

    @Test func pinnedSnapshotIgnoresAnotherProcessesCommitUntilRefresh() throws {
        let url = folder.file()
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [ProcessDog.self]))
        try realm.write { realm.add(ProcessDog(value: ["name": "local"])) }
        #expect(try runHelper(["write", url.path, "3"]) == "wrote 3")
        #expect(realm.objects(ProcessDog.self).count == 1)
        realm.refresh()
        #expect(realm.objects(ProcessDog.self).count == 4)
        #expect(try runHelper(["count", url.path]) == "4")
    }
}

/// The helper's model (same class in Sources/TrellisProcessHelper).
class ProcessDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}
