import Foundation
import Synchronization
import Testing
@testable import Trellis

/// An actor holding its Realm, as in Realm's documentation (`RealmActor`).
actor DogKeeper {
    var realm: Realm!
    init(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }
    func add(_ name: String) throws { try realm.write { realm.create(Dog.self, value: ["name": name]) } }
    func close() { realm = nil }
    func firstAge() -> Int? { realm.objects(Dog.self).first?.age }
    /// The Realm and its first dog, handed out of the actor as the documentation's Swift 5 code
    /// does with `await actor.realm`.
    func handOut() -> HandedOut { HandedOut(realm: realm, dog: realm.objects(Dog.self).first!) }
}

// @unchecked Sendable: the test hands the actor's values out on purpose (see DogKeeper.handOut).
struct HandedOut: @unchecked Sendable {
    let realm: Realm
    let dog: Dog
}

/// Thread-safe log of what the blocks saw.
final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }

    /// Waits (up to 5 s) until `count` entries are logged.
    func wait(for count: Int) async throws {
        for _ in 0..<100 where all.count < count { try await Task.sleep(nanoseconds: 50_000_000) }
    }
}

/// `writeAsync` on an actor's Realm runs on the actor, in order, so its changes reach the
/// actor's observers (Realm's documentation, RealmActorTests `testObserveObjectOnActor` and
/// `testObserveCollectionOnActor`).
@Suite struct ActorAsyncWriteTests {
    let folder = TemporaryFolder()

    @Test func anObjectObservedOnAnActorSeesAWriteAsyncAskedForFromOutside() async throws {
        let keeper = try await DogKeeper(folder.configuration([Dog.self]))
        try await keeper.add("Rex")
        let handed = await keeper.handOut()
        let log = EventLog()
        let token = await handed.dog.observe(on: keeper) { _, change in
            if case .change(_, let properties) = change { log.add(properties.map(\.name).joined()) }
        }
        handed.realm.writeAsync { handed.dog.age = 5 }
        try await log.wait(for: 1)
        #expect(log.all == ["age"])
        token.invalidate()
        await keeper.close()
    }

    @Test func aWriteAsyncOnTheActorComesAfterTheInitialNotification() async throws {
        let keeper = try await DogKeeper(folder.configuration([Dog.self]))
        try await keeper.add("Rex")
        let log = EventLog()
        let token = try await Self.observeThenWrite(keeper, log)
        try await log.wait(for: 2)
        #expect(log.all == ["initial", "update [0]"])
        token.invalidate()
        await keeper.close()
    }

    private static func observeThenWrite(_ keeper: isolated DogKeeper, _ log: EventLog) async throws
        -> NotificationToken
    {
        let dogs = keeper.realm.objects(Dog.self)
        let token = await dogs.observe(on: keeper) { _, change in
            switch change {
            case .initial: log.add("initial")
            case .update(_, _, _, let modifications): log.add("update \(modifications)")
            case .error: log.add("error")
            }
        }
        keeper.realm.writeAsync { dogs.first?.age = 5 }
        return token
    }

    @Test func writeAsyncBlocksAndCompletionsRunInOrderOnTheActor() async throws {
        let keeper = try await DogKeeper(folder.configuration([Dog.self]))
        try await keeper.add("Rex")
        let log = EventLog()
        try await Self.writeThree(keeper, log)
        try await log.wait(for: 7)
        let writes = log.all.filter { $0.hasPrefix("write") }
        let completions = log.all.filter { $0.hasPrefix("done") }
        #expect(log.all.first == "asked")
        #expect(writes == ["write 1", "write 2", "write 3"])
        #expect(completions == ["done 1", "done 2", "done 3"])
        for n in 1...3 {
            #expect(try #require(log.all.firstIndex(of: "write \(n)")) < #require(log.all.firstIndex(of: "done \(n)")))
        }
        #expect(await keeper.firstAge() == 3)
        await keeper.close()
    }

    private static func writeThree(_ keeper: isolated DogKeeper, _ log: EventLog) async throws {
        let realm = keeper.realm!
        for n in 1...3 {
            realm.writeAsync({
                log.add("write \(n)")
                realm.objects(Dog.self).first?.age = n
            }, onComplete: { error in log.add(error == nil ? "done \(n)" : "failed \(n)") })
        }
        // As in Realm, the blocks run on a later turn of the actor, not inside writeAsync.
        log.add("asked")
    }
}
