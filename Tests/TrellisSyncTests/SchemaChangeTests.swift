import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// Issue 36 item 11: the server restarted on a changed schema. Additive changes (a new
/// optional property, a new class) keep existing clients syncing at the same schema version,
/// as Device Sync does; breaking ones need a new `--schema-version`, and clients still on the
/// old version get error 235 telling them to update.
@Suite(.serialized) struct SchemaChangeTests {
    /// The schema file of the test models with `change` applied to the collection documents.
    private func changedSchema(_ change: (inout [String: JSONValue]) -> Void) throws -> URL {
        let original = try makeSchemaFile()
        guard let array = try JSONValue(jsonText: String(contentsOf: original, encoding: .utf8)).arrayValue else {
            throw ToolError(description: "schema file is not an array")
        }
        var collections = [String: JSONValue]()
        for document in array { if let title = document["title"]?.stringValue { collections[title] = document } }
        change(&collections)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sync-schema-\(UUID().uuidString).json")
        try JSONValue.array(collections.keys.sorted().compactMap { collections[$0] }).jsonText
            .write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Sets `properties.<name>` of a collection's schema (and `required` when asked).
    private func setProperty(_ collections: inout [String: JSONValue], _ className: String, _ name: String,
                             _ property: JSONValue, required: Bool = false) {
        guard case .object(var document)? = collections[className],
              case .object(var properties)? = document["properties"] else { return }
        properties[name] = property
        document["properties"] = .object(properties)
        if required {
            document["required"] = .array((document["required"]?.arrayValue ?? []) + [.string(name)])
        }
        collections[className] = .object(document)
    }

    @Test func additiveSchemaChangesKeepExistingClientsSyncingWithoutANewVersion() async throws {
        let fixture = try SyncFixture()
        let log = BadInputTests.ErrorLog()
        let device = try await Device(server: fixture.server)
        log.install(device.app)
        try device.write { realm in realm.add(SyncDog(value: ["name": "Rex", "age": 3])) }
        try await device.sync()
        let port = fixture.server.port
        fixture.server.kill()
        // The server's schema grows: an optional property of SyncDog, a new collection.
        let grown = try changedSchema { collections in
            setProperty(&collections, "SyncDog", "color", .object(["bsonType": .string("string")]))
            collections["SyncToy"] = .object([
                "title": .string("SyncToy"), "bsonType": .string("object"), "required": .array([.string("_id")]),
                "properties": .object(["_id": .object(["bsonType": .string("objectId")]),
                                       "name": .object(["bsonType": .string("string")])]),
            ])
        }
        let server = try ServerProcess(database: fixture.database, schema: grown, port: port)
        // The existing client (the old models) reconnects without an error and keeps syncing.
        try device.write { realm in realm.add(SyncDog(value: ["name": "Fido", "age": 5])) }
        try await device.sync()
        #expect(log.serverCodes.isEmpty, "errors: \(log.errors.withLock { $0 })")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "2")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncToy\"") == "0")
        // A document holding the new property reaches it; its edits leave the property alone.
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncDog" SET doc = doc || '{"color": "brown", "name": "Rex II"}' WHERE doc->>'name' = 'Rex'
            """)
        #expect(try await eventually { try device.run { $0.objects(SyncDog.self).filter("name == 'Rex II'").count } == 1 })
        try device.write { realm in realm.objects(SyncDog.self).filter("name == 'Rex II'").first?.age = 4 }
        try await device.sync()
        #expect(try PostgresFixture.psql(fixture.database,
            "SELECT doc->>'color' || ' ' || (doc->'age'->>'$numberLong') FROM \"SyncDog\" WHERE doc->>'name' = 'Rex II'")
            == "brown 4")
        #expect(log.serverCodes.isEmpty)
        #expect(!server.log.contains("error 225"))
        await device.close()
    }

    @Test func breakingSchemaChangeNeedsANewSchemaVersionAndOldClientsAreToldToUpdate() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server)
        let log = BadInputTests.ErrorLog()
        log.install(device.app)
        try device.write { realm in realm.add(SyncDog(value: ["name": "Rex", "age": 3])) }
        try await device.sync()
        let port = fixture.server.port
        fixture.server.kill()
        let retyped = try changedSchema { collections in
            setProperty(&collections, "SyncDog", "age", .object(["bsonType": .string("string")]), required: true)
        }
        // At the same schema version the server refuses to start, saying what to do.
        do {
            _ = try ServerProcess(database: fixture.database, schema: retyped, port: port)
            Issue.record("the server started with a breaking change at the same schema version")
        } catch let error as ToolError {
            #expect(error.description.contains("'SyncDog.age' changed type from long to string"), "\(error)")
            #expect(error.description.contains("--schema-version 1"), "\(error)")
        }
        // A new required property is breaking too.
        let required = try changedSchema { collections in
            setProperty(&collections, "SyncDog", "breed", .object(["bsonType": .string("string")]), required: true)
        }
        #expect(throws: ToolError.self) { _ = try ServerProcess(database: fixture.database, schema: required, port: port) }
        // With a new schema version it starts; the old client is told to update.
        let server = try ServerProcess(database: fixture.database, schema: retyped, arguments: ["--schema-version", "1"],
                                       port: port)
        try device.write { realm in realm.add(SyncDog(value: ["name": "Fido", "age": 5])) }
        let session = try device.session
        session.reconnect()
        await #expect(throws: SyncError.self) {
            try await withTimeout(.seconds(20)) { try await session.wait(for: .upload) }
        }
        #expect(log.serverCodes == [235])
        let message = log.errors.withLock { $0.first?.message } ?? ""
        #expect(message.contains("schema version 0 but the server serves schema version 1"), "\(message)")
        #expect(message.contains("update the app"), "\(message)")
        // An older version than the database serves is refused at start.
        server.kill()
        do {
            _ = try ServerProcess(database: fixture.database, schema: fixture.schema, port: port)
            Issue.record("a server of schema version 0 started on a database at version 1")
        } catch let error as ToolError {
            #expect(error.description.contains("serves schema version 1"), "\(error)")
        }
        await device.close()
    }
}
