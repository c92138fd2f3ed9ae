import Foundation
import Testing
@testable import Trellis

/// Behaviour that matches Realm where Trellis used to differ.
@Suite struct RealmBehaviorTests {
    let folder = TemporaryFolder()

    @Test func localizedDescriptionIsTheErrorMessage() throws {
        let url = folder.file("not-a-realm")
        try Data("hello".utf8).write(to: url)
        do {
            _ = try Realm(fileURL: url)
            Issue.record("opened a text file")
        } catch {
            // What Realm's documentation prints: `error.localizedDescription`.
            #expect(error.localizedDescription.contains("is not a Trellis database"))
            #expect(!error.localizedDescription.contains("could not be completed"))
        }
    }

    @Test func theDefaultRealmWorksWhenItsFolderIsMissing() throws {
        let data = folder.url.appendingPathComponent("xdg/data")  // does not exist yet
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = ["open-default", "-"]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": data.path]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.hasPrefix(data.path))
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("default.realm"))
    }

    @Test func readOnlyWithDeleteIfMigrationNeededTrapsBeforeTouchingTheFile() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("never-\(UUID()).realm")
            _ = try? Realm(configuration: .init(fileURL: url, readOnly: true, deleteRealmIfMigrationNeeded: true))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot set `deleteRealmIfMigrationNeeded` when `readOnly` is set."))
    }

    @Test func aClassOutsideObjectTypesIsRefusedWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("subset-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) else { return }
            try? realm.write { realm.add(Pet("not listed")) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Object type 'Pet' is not managed by the Realm. If using a custom `objectClasses` / "
            + "`objectTypes` array in your configuration, add `Pet` to the list of `objectClasses` / `objectTypes`."))
    }
}

@Suite struct RealmNotificationTimingTests {
    let folder = TemporaryFolder()

    @Test func realmObserveRunsSynchronouslyAtTheEndOfEveryLocalWrite() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        var calls = 0
        let token = realm.observe { notification, _ in
            #expect(notification == .didChange)
            calls += 1
        }
        try realm.write { realm.add(Dog()) }
        #expect(calls == 1)
        try realm.write {}
        #expect(calls == 2)
        realm.beginWrite()
        realm.add(Dog())
        try realm.commitWrite()
        #expect(calls == 3)
        token.invalidate()
    }
}
