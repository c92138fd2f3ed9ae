import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync

/// A large initial download equals its source object by object; a client process killed with
/// SIGKILL in the middle of it reopens consistent and finishes on its next connection.
@Suite(.serialized)
struct RecoveryAndScaleTests {
    /// Objects of the large download: half dogs, half people (about 10 s in a debug build).
    static let objectCount = 10_000
    /// Objects of the interrupted download (10 frames).
    static let interruptedCount = 5_000

    @Test func initialDownloadOf10000ObjectsEqualsTheSource() async throws {
        let fixture = try SyncFixture()
        try seedDogsAndPeople(fixture.database, count: Self.objectCount)
        let device = try await Device(server: fixture.server)
        try await withTimeout(.seconds(120)) { try await device.session.wait(for: .download) }
        try expectEqualToPostgres(device, fixture.database, count: Self.objectCount)
        await device.close()
    }

    /// The download arrives in frames of 500 objects, each applied in one write transaction; the
    /// client process kills itself with SIGKILL 150 ms after its fourth frame, in the middle
    /// of applying the next ones.
    @Test func clientKilledMidDownloadReopensConsistentAndFinishes() async throws {
        let fixture = try SyncFixture()
        try seedDogsAndPeople(fixture.database, count: Self.interruptedCount)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-killed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("device.realm").path
        let baseURL = fixture.server.baseURL
        await #expect(processExitsWith: .signal(SIGKILL)) { [baseURL = baseURL as String, path = path as String] in
            try await downloadUntilKilled(baseURL: baseURL, path: path, afterFrames: 4)
        }

        // Reopened without sync: consistent, and only whole frames are visible.
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: syncModelTypes)
        configuration.schemaVersion = 0
        let partial = try DispatchQueue(label: "reopen").sync {
            let realm = try Realm(configuration: configuration)
            let problems = realm._consistencyProblems()
            #expect(problems.isEmpty, "\(problems.prefix(5))")
            return realm.objects(SyncDog.self).count + realm.objects(SyncPerson.self).count
        }
        #expect(partial >= 2_000 && partial < Self.interruptedCount, "objects after the kill: \(partial)")
        #expect(partial % 500 == 0, "a frame is one transaction: \(partial) objects is not a whole number of frames")

        // The next connection finishes the download.
        let device = try await Device(server: fixture.server,
                                      credentials: .jwt(token: try await TestTokens.login("crash-device")),
                                      file: URL(fileURLWithPath: path))
        try await withTimeout(.seconds(120)) { try await device.session.wait(for: .download) }
        try expectEqualToPostgres(device, fixture.database, count: Self.interruptedCount)
        let problems = try device.run { $0._consistencyProblems() }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        await device.close()
    }
}

/// In the child process of `clientKilledMidDownloadReopensConsistentAndFinishes`: opens the
/// synced file, and SIGKILLs itself 150 ms after the `afterFrames`-th download frame.
private func downloadUntilKilled(baseURL: String, path: String, afterFrames: Int) async throws {
    // The file's user (a client id belongs to one user: the reopened file must be this user's).
    let device = try await Device(baseURL: baseURL, credentials: .jwt(token: try await TestTokens.login("crash-device")),
                                  file: URL(fileURLWithPath: path))
    let frames = Atomic<Int>(0)
    let session = try device.session
    let token = session.addProgressNotification(for: .download) { _ in
        guard frames.add(1, ordering: .relaxed).newValue == afterFrames else { return }
        Thread.detachNewThread {
            usleep(150_000)
            kill(getpid(), SIGKILL)
        }
    }
    try await Task.sleep(for: .seconds(300))
    token?.invalidate()
}

/// `count` objects written with SQL as another backend would: half dogs, half people (a link,
/// a list of two links, an embedded object and a list of embedded objects each).
func seedDogsAndPeople(_ database: String, count: Int) throws {
    let half = count / 2
    try PostgresFixture.psql(database, """
        INSERT INTO "SyncDog" (_id, doc)
        SELECT lpad(to_hex(i), 24, '0'), jsonb_build_object(
          '_id', jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')), 'name', 'dog ' || i,
          'age', jsonb_build_object('$numberLong', (i % 20)::text))
        FROM generate_series(1, \(half)) AS i;
        INSERT INTO "SyncPerson" (_id, doc)
        SELECT 'a' || lpad(to_hex(i), 23, '0'), jsonb_build_object(
          '_id', jsonb_build_object('$oid', 'a' || lpad(to_hex(i), 23, '0')), 'name', 'person ' || i,
          'dog', jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')),
          'dogs', jsonb_build_array(jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')),
                                    jsonb_build_object('$oid', lpad(to_hex(\(half + 1) - i), 24, '0'))),
          'address', jsonb_build_object('street', i || ' Main St', 'city', 'Oslo'),
          'previousAddresses', jsonb_build_array(jsonb_build_object('street', 'Old ' || i, 'city', null)))
        FROM generate_series(1, \(half)) AS i;
        """)
}

/// Compares every dog and person of the device with its row in PostgreSQL.
func expectEqualToPostgres(_ device: Device, _ database: String, count: Int) throws {
    let local = try device.run { realm -> [String: JSONObject] in
        var documents = [String: JSONObject]()
        for dog in realm.objects(SyncDog.self) { documents[dog._id.stringValue] = try JSONObject(dog) }
        for person in realm.objects(SyncPerson.self) { documents[person._id.stringValue] = try JSONObject(person) }
        return documents
    }
    #expect(local.count == count)
    let rows = try PostgresFixture.psql(database,
        "SELECT _id || ' ' || doc::text FROM \"SyncDog\" UNION ALL SELECT _id || ' ' || doc::text FROM \"SyncPerson\"")
    var compared = 0, different = [String]()
    for row in rows.split(separator: "\n") {
        guard let space = row.firstIndex(of: " ") else { continue }
        let id = String(row[..<space])
        let source = try JSONObject(text: String(row[row.index(after: space)...]))
        if local[id] != source { different.append(id) }
        compared += 1
    }
    #expect(compared == count)
    #expect(different.isEmpty, "objects that differ from PostgreSQL: \(different.prefix(5))")
}

/// A JSON document compared by value (key order and number spelling aside).
struct JSONObject: Equatable {
    let value: NSDictionary

    init(text: String) throws {
        value = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary ?? [:]
    }

    init(_ object: ObjectBase) throws {
        value = try JSONSerialization.jsonObject(with: ExtendedJSON.document(for: object)) as? NSDictionary ?? [:]
    }
}
