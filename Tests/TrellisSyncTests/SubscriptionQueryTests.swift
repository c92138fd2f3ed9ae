import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient
import Logging

/// Issue 36 item 12: a subscription the server cannot serve (a property its schema does not
/// have, a query through a link, `@links`, `SUBQUERY`, aggregates) fails at
/// `subscriptions.update` with Realm's `Realm.Error.subscriptionFailed`, and the file keeps the
/// set the server still serves.
@Suite(.serialized) struct SubscriptionQueryTests {
    /// Updates the subscriptions to `subscription`, expecting Realm's `.subscriptionFailed`
    /// whose message holds `expected`.
    private func expectRefused<T: Object>(_ device: Device, _ subscription: QuerySubscription<T>, _ expected: String)
        async throws
    {
        let subscriptions = try device.run { $0.subscriptions }
        do {
            try await withTimeout(.seconds(20)) {
                try await subscriptions.update { $0.append(subscription) }
            }
            Issue.record("the subscription was accepted; expected a refusal naming \(expected)")
        } catch let error as Realm.Error {
            #expect(error.code == .subscriptionFailed)
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix("Invalid query"), "\(error.message)")
        }
        guard case .error(let error) = subscriptions.state else {
            Issue.record("the set's state is \(subscriptions.state), not .error")
            return
        }
        #expect(error.message.contains(expected))
    }

    @Test func subscriptionOnAPropertyThatDoesNotExistFailsAtUpdateAndSyncGoesOn() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "dogs"))
        })
        try device.write { realm in realm.add(SyncDog(value: ["name": "Rex", "age": 3])) }
        try await device.sync()
        // Checked against the models before anything is stored or sent.
        let subscriptions = try device.run { $0.subscriptions }
        do {
            try await withTimeout(.seconds(20)) {
                try await subscriptions.update { $0.append(QuerySubscription<SyncDog>(name: "brown", query: "color == 'brown'")) }
            }
            Issue.record("a subscription on a property the model does not have was accepted")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidQuery)
            #expect(error.message.contains("color"), "\(error.message)")
        }
        #expect(try device.run { realm in Array(realm.subscriptions).map(\.name) } == ["dogs"])
        // A refusal by the server leaves the file on the set the server serves.
        try await expectRefused(device, QuerySubscription<SyncPerson>(name: "link", query: "dog.name == 'Rex'"),
                                "Flexible Sync queries cannot follow links")
        #expect(try device.run { realm in Array(realm.subscriptions).map(\.name) } == ["dogs"])
        let other = try await Device(server: fixture.server)
        try other.write { realm in realm.add(SyncDog(value: ["name": "Fido", "age": 5])) }
        try await other.sync()
        try device.session.reconnect()
        try await device.sync()
        #expect(try device.run { $0.objects(SyncDog.self).count } == 2)
        // A good set afterwards completes.
        try await withTimeout(.seconds(20)) {
            try await subscriptions.update { $0.append(QuerySubscription<SyncPerson>(name: "people")) }
        }
        guard case .complete = subscriptions.state else {
            Issue.record("state \(subscriptions.state) after a good update")
            return
        }
        await other.close()
        await device.close()
    }

    @Test func queriesFlexibleSyncCannotRunFailAtUpdateWithTheReason() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server, subscriptions: { subs in
            subs.append(QuerySubscription<SyncDog>(name: "dogs"))
        })
        try await device.sync()
        try await expectRefused(device, QuerySubscription<SyncPerson>(name: "link", query: "dog.name == 'Rex'"),
                                "Flexible Sync queries cannot follow links")
        try await expectRefused(device, QuerySubscription<SyncPerson>(name: "link list", query: "ANY dogs.age > 2"),
                                "Flexible Sync queries cannot follow links")
        try await expectRefused(device, QuerySubscription<SyncDog>(name: "links", query: "@links.@count > 0"),
                                "@links")
        try await expectRefused(device, QuerySubscription<SyncPerson>(
            name: "subquery", query: "SUBQUERY(previousAddresses, $a, $a.city == 'Oslo').@count > 0"), "SUBQUERY")
        try await expectRefused(device, QuerySubscription<SyncTask>(name: "avg", query: "scores.@avg > 2"), "@avg")
        // What Flexible Sync serves here: embedded objects (also in lists), map keys, @count.
        let subscriptions = try device.run { $0.subscriptions }
        try await withTimeout(.seconds(20)) {
            try await subscriptions.update {
                subscriptions.append(QuerySubscription<SyncPerson>(name: "city", query: "address.city == 'Oslo'"))
                subscriptions.append(QuerySubscription<SyncPerson>(name: "old", query: "ANY previousAddresses.city == 'Oslo'"))
                subscriptions.append(QuerySubscription<SyncTask>(name: "map", query: "scores['math'] > 2"))
                subscriptions.append(QuerySubscription<SyncTask>(name: "steps", query: "steps.@count > 1 AND title BEGINSWITH[c] 'a'"))
            }
        }
        await device.close()
    }

    /// The server's own check, for clients that do not check (or models that differ): a raw
    /// client subscribes on a property the server's schema does not have.
    @Test func serverRefusesASubscriptionOnAPropertyItsSchemaDoesNotHave() async throws {
        let fixture = try SyncFixture()
        let user = try await testApp(fixture.server.baseURL).login(credentials: .anonymous)
        let set = SubscriptionSet(version: 1, subscriptions: [
            .init(name: "brown", className: "SyncDog", query: "color == \"brown\""),
        ])
        let hello = SyncMessage.hello(.init(appId: "trellis", accessToken: user.accessToken ?? "",
                                            clientId: "raw-\(UUID())", schemaVersion: 0, schema: [:],
                                            lastServerVersion: 0, subscriptions: set))
        let frames = Mutex<[SyncMessage]>([])
        try await withTimeout(.seconds(20)) {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(fixture.server.port)/api/client/v2.0/app/trellis/realm-sync",
                                              logger: Logger(label: "raw")) { inbound, outbound, _ in
                try await outbound.write(.text(SyncCoding.encode(hello)))
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message, let frame = try? SyncCoding.decode(text) else { continue }
                    frames.withLock { $0.append(frame) }
                    if case .error = frame { break }
                    if case .welcome = frame { break }
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
        let error = frames.withLock { $0.lazy.compactMap { if case .error(let error) = $0 { error } else { nil } }.first }
        #expect(error?.code == 226)
        #expect(error?.subscriptionVersion == 1)
        #expect(error?.message.contains("key \"color\" is not a queryable field") == true, "\(String(describing: error))")
    }
}
