import Foundation
import Trellis
import TrellisSync

/// One client device of the benchmark: its own user, file and a Realm confined to its queue.
final class BenchClient: @unchecked Sendable {
    // @unchecked Sendable: `realm` is only touched on `queue` (every access goes through `run`).
    let name: String
    let configuration: Realm.Configuration
    let queue: DispatchQueue
    let user: User
    private var realm: Realm?

    /// Every class of the benchmark, whole.
    static let subscribeToEverything: @Sendable (SyncSubscriptionSet) -> Void = { subs in
        subs.append(QuerySubscription<BenchDog>(name: "dogs"))
        subs.append(QuerySubscription<BenchPerson>(name: "people"))
        subs.append(QuerySubscription<BenchPing>(name: "pings"))
    }

    init(_ name: String, baseURL: String, folder: URL) async throws {
        self.name = name
        // Each client its own app folder (users file): its own anonymous user.
        let app = App(id: "trellis", configuration: AppConfiguration(
            baseURL: baseURL, rootDirectory: folder.appendingPathComponent("\(name)-app")))
        user = try await app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: Self.subscribeToEverything)
        configuration.fileURL = folder.appendingPathComponent("\(name).realm")
        configuration.objectTypes = benchTypes
        self.configuration = configuration
        queue = DispatchQueue(label: "syncbench.\(name)")
    }

    /// Runs `body` on the client's queue with its Realm (opened on first use, refreshed).
    func run<T>(_ body: (Realm) throws -> T) throws -> T {
        try queue.sync {
            if realm == nil { realm = try Realm(configuration: configuration, queue: queue) }
            guard let realm else { throw BenchError("\(name): no Realm") }
            realm.refresh()
            return try body(realm)
        }
    }

    var session: SyncSession {
        get throws {
            guard let session = try run({ $0.syncSession }) else { throw BenchError("\(name): no sync session") }
            return session
        }
    }

    /// Opens the Realm with `Realm.asyncOpen`, which hands it over once everything the
    /// subscriptions select is downloaded; kept as the client's Realm.
    func asyncOpen() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            // The callback runs on `queue`, where the Realm is confined: it is kept there.
            Realm.asyncOpen(configuration: configuration, callbackQueue: queue) { result in
                switch result {
                case .success(let opened):
                    self.realm = opened
                    continuation.resume()
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func close() async {
        queue.sync { realm = nil }
        try? await user.logOut()
    }
}
