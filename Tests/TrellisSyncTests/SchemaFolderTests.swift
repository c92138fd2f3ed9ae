import Foundation
import Testing
import Trellis
import TrellisSync

/// docs/SYNC.md's path from models to a running server (issue 36, item 13): the folder that
/// `trellis schema export --app-services --out` writes is what `trellis-sync --schema` takes.
@Suite(.serialized)
struct SchemaFolderTests {
    @Test func serverServesTheFolderThatSchemaExportWrites() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A Trellis file with the models, as an app's default.realm would be.
        var local = Realm.Configuration()
        local.fileURL = folder.appendingPathComponent("models.realm")
        local.objectTypes = syncModelTypes
        _ = try Realm(configuration: local)
        let trellis = ServerProcess.executable.deletingLastPathComponent().appendingPathComponent("trellis")
        let atlas = folder.appendingPathComponent("atlas")
        try runTool(trellis.path, ["schema", "export", local.fileURL?.path ?? "", "--app-services", "--out", atlas.path])
        #expect(FileManager.default.fileExists(atPath: atlas.appendingPathComponent("SyncDog/schema.json").path))

        let database = try PostgresFixture.makeDatabase()
        let server = try ServerProcess(database: database, schema: atlas)
        let device = try await Device(server: server)
        try device.write { realm in realm.add(SyncPerson(value: ["name": "Ana", "dog": ["name": "Rex"]])) }
        try await device.sync()
        #expect(try PostgresFixture.psql(database, "SELECT doc->>'name' FROM \"SyncPerson\"") == "Ana")
        #expect(try PostgresFixture.psql(database, "SELECT doc->>'name' FROM \"SyncDog\"") == "Rex")
        await device.close()
    }
}
