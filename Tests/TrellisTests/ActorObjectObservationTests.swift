import Foundation
import Testing
@testable import Trellis

final class ActorTodo: Object {
    @Persisted var status = ""
}

/// `object.observe(on: actor)` as realm-swift registers it and `asyncWrite` as it returns:
/// - the object is handed to the actor by a `ThreadSafeReference` (realm-swift's
///   `with(_:on:)`), so the actor's Realm starts at the caller's version and a commit made in
///   between is the observer's first change; `observe` returns once that first delivery ran
///   (RLMObjectNotificationToken's `registrationComplete`);
/// - `asyncWrite` returns once its commit completed (`commitAsyncWrite`'s completion, after the
///   commit reached the disk), by which time the Realms observing on other actors were told;
///   docs-realm's testObserveObjectOnActor invalidates its token right after and still gets
///   the change.
@Suite struct ActorObjectObservationTests {
    let folder = TemporaryFolder()

    /// Where the notifications run.
    actor Background {}

    /// A Realm confined to an actor (the docs use the main actor).
    actor Writer {
        var realm: Realm!

        init(_ configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
        }

        /// docs-realm's testObserveObjectOnActor: observe on another actor, change the object
        /// with `asyncWrite`, invalidate the token at once.
        func observeWriteAndInvalidate(on background: Background, into inbox: LockedBox<[String]>) async throws {
            let realm = self.realm!
            let todo = try await realm.asyncWrite { realm.create(ActorTodo.self, value: ["status": "In Progress"]) }
            let token = await todo.observe(on: background) { _, change in
                if case .change(_, let properties) = change {
                    inbox.mutate { $0 += properties.map { "\($0.name) -> \($0.newValue ?? "nil")" } }
                }
            }
            try await realm.asyncWrite { todo.status = "Complete" }
            token.invalidate()
        }

        /// Another thread commits while this actor runs (its Realm moves to that commit only in
        /// a later job), then the object is observed on `background`.
        func observeAfterAnotherThreadCommitted(on background: Background,
                                                into inbox: LockedBox<[String]>) async throws
        {
            let realm = self.realm!
            let todo = try await realm.asyncWrite { realm.create(ActorTodo.self, value: ["status": "Open"]) }
            let configuration = realm.configuration
            try onOtherThread {
                let other = try Realm(configuration: configuration)
                try other.write { other.objects(ActorTodo.self).first?.status = "Done" }
            }
            #expect(todo.status == "Open")
            let token = await todo.observe(on: background) { _, change in
                if case .change(_, let properties) = change {
                    inbox.mutate { $0 += properties.map { "\($0.name) \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" } }
                }
            }
            inbox.mutate { $0.append("registered") }
            token.invalidate()
        }
    }

    @Test func anAsyncWriteReturnsOnceAnObserverOnAnotherActorHeardOfIt() async throws {
        let writer = try await Writer(folder.configuration([ActorTodo.self]))
        let inbox = LockedBox<[String]>([])
        try await writer.observeWriteAndInvalidate(on: Background(), into: inbox)
        #expect(inbox.get() == ["status -> Complete"])
    }

    #if !TRELLIS_LMDB
    // (The LMDB build may begin the actor's read at the newest version: see
    // QueueObservationRegistrationTests.)

    /// The actor's Realm begins at the caller's version: the other thread's commit is the
    /// observer's first change, with the old value, delivered before `observe` returns.
    @Test func aCommitBeforeTheActorRegisteredIsAChangeWithTheOldValue() async throws {
        let writer = try await Writer(folder.configuration([ActorTodo.self]))
        let inbox = LockedBox<[String]>([])
        try await writer.observeAfterAnotherThreadCommitted(on: Background(), into: inbox)
        #expect(inbox.get() == ["status Open -> Done", "registered"])
    }
    #endif
}
