import Foundation
import Trellis
import TrellisSync
import TrellisSyncTestModels

// A sync client in a process of its own, so a test can run it under another clock (`faketime`,
// Tests/TrellisSyncTests/ClockSkewProcessTests.swift):
//
//   TrellisSyncClientHelper edit BASE_URL FOLDER ID EXPECTED_TITLE NEW_TITLE SKEW_SECONDS PARENT_NOW_MS
//
// 1. checks that this process's `Date()` is SKEW_SECONDS (± 120 s) away from PARENT_NOW_MS, the
//    test's clock just before it started this process (so a test cannot pass with an unskewed
//    clock), and prints `skew: N s`;
// 2. logs in anonymously, syncs the SyncTask objects, and checks that task ID's title is
//    EXPECTED_TITLE (`-`: the task need not exist);
// 3. sets (or inserts) its title to NEW_TITLE, uploads, and prints `title: …` as it then stands.
// Exit status 0 when all of it worked, 1 with a message on standard output otherwise.

func fail(_ message: String) -> Never {
    print("client-helper: \(message)")
    exit(1)
}

struct HelperError: Error, CustomStringConvertible {
    let description: String
}

/// One client's Realm, confined to its own queue.
final class Client: @unchecked Sendable {
    let configuration: Realm.Configuration
    let queue = DispatchQueue(label: "client-helper")
    private var realm: Realm?

    init(user: User, folder: URL) {
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
            subs.append(QuerySubscription<SyncTask>(name: "tasks"))
        })
        configuration.fileURL = folder.appendingPathComponent("client.realm")
        configuration.objectTypes = [SyncTask.self]
        configuration.syncOnCommit = false
        self.configuration = configuration
    }

    func run<T>(_ body: (Realm) throws -> T) throws -> T {
        try queue.sync {
            if realm == nil { realm = try Realm(configuration: configuration, queue: queue) }
            guard let realm else { throw HelperError(description: "no Realm") }
            realm.refresh()
            return try body(realm)
        }
    }

    func sync() async throws {
        guard let session = try run({ $0.syncSession }) else { throw HelperError(description: "no sync session") }
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
    }

    func title(of id: ObjectId) throws -> String? {
        try run { $0.object(ofType: SyncTask.self, forPrimaryKey: id)?.title }
    }
}

func edit(_ arguments: [String]) async throws {
    guard arguments.count == 7, let skew = Double(arguments[5]), let parentNow = Double(arguments[6]) else {
        fail("usage: edit BASE_URL FOLDER ID EXPECTED_TITLE NEW_TITLE SKEW_SECONDS PARENT_NOW_MS")
    }
    let measured = Date().timeIntervalSince1970 - parentNow / 1000
    print("skew: \(Int(measured.rounded())) s")
    guard abs(measured - skew) < 120 else {
        fail("this process's clock is \(Int(measured)) s from the test's, not \(Int(skew)) s: is faketime working?")
    }
    let folder = URL(fileURLWithPath: arguments[1])
    let id = try ObjectId(string: arguments[2])
    let app = App(id: "trellis", configuration: AppConfiguration(baseURL: arguments[0], rootDirectory: folder))
    let user = try await app.login(credentials: .anonymous)
    let client = Client(user: user, folder: folder)
    try await client.sync()
    let seen = try client.title(of: id)
    if arguments[3] != "-" && seen != arguments[3] {
        fail("before editing, task \(id) has title \(seen ?? "nil"), expected \(arguments[3])")
    }
    try client.run { realm in
        try realm.write {
            if let task = realm.object(ofType: SyncTask.self, forPrimaryKey: id) {
                task.title = arguments[4]
            } else {
                realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": arguments[4]]))
            }
        }
    }
    try await client.sync()
    print("title: \(try client.title(of: id) ?? "nil")")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "edit" else { fail("usage: TrellisSyncClientHelper edit …") }
// Bounded: a hung sync must not outlive the test.
DispatchQueue.global().asyncAfter(deadline: .now() + 120) { fail("gave up after 120 s") }
do {
    try await edit(Array(arguments.dropFirst()))
    exit(0)
} catch {
    fail("\(error)")
}
