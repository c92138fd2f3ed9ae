import Foundation
import Testing
import Trellis
import TrellisSync

/// A large initial download equals its source object by object.
@Suite(.serialized)
struct RecoveryAndScaleTests {
    @Test func initialDownloadOf10000ObjectsEqualsTheSource() async throws {
        let fixture = try SyncFixture()
        // 5,000 dogs and 5,000 people (a link, a list of links, an embedded object and a list of
        // embedded objects each), written with SQL as another backend would.
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncDog" (_id, doc)
            SELECT lpad(to_hex(i), 24, '0'), jsonb_build_object(
              '_id', jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')), 'name', 'dog ' || i,
              'age', jsonb_build_object('$numberLong', (i % 20)::text))
            FROM generate_series(1, 5000) AS i;
            INSERT INTO "SyncPerson" (_id, doc)
            SELECT 'a' || lpad(to_hex(i), 23, '0'), jsonb_build_object(
              '_id', jsonb_build_object('$oid', 'a' || lpad(to_hex(i), 23, '0')), 'name', 'person ' || i,
              'dog', jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')),
              'dogs', jsonb_build_array(jsonb_build_object('$oid', lpad(to_hex(i), 24, '0')),
                                        jsonb_build_object('$oid', lpad(to_hex(5001 - i), 24, '0'))),
              'address', jsonb_build_object('street', i || ' Main St', 'city', 'Oslo'),
              'previousAddresses', jsonb_build_array(jsonb_build_object('street', 'Old ' || i, 'city', null)))
            FROM generate_series(1, 5000) AS i;
            """)
        let device = try await Device(server: fixture.server)
        try await withTimeout(.seconds(120)) { try await device.session.wait(for: .download) }
        let local = try device.run { realm -> [String: JSONObject] in
            var documents = [String: JSONObject]()
            for dog in realm.objects(SyncDog.self) { documents[dog._id.stringValue] = try JSONObject(dog) }
            for person in realm.objects(SyncPerson.self) { documents[person._id.stringValue] = try JSONObject(person) }
            return documents
        }
        #expect(local.count == 10_000)
        let rows = try PostgresFixture.psql(fixture.database,
            "SELECT _id || ' ' || doc::text FROM \"SyncDog\" UNION ALL SELECT _id || ' ' || doc::text FROM \"SyncPerson\"")
        var compared = 0, different = [String]()
        for row in rows.split(separator: "\n") {
            guard let space = row.firstIndex(of: " ") else { continue }
            let id = String(row[..<space])
            let source = try JSONObject(text: String(row[row.index(after: space)...]))
            if local[id] != source { different.append(id) }
            compared += 1
        }
        #expect(compared == 10_000)
        #expect(different.isEmpty, "objects that differ from PostgreSQL: \(different.prefix(5))")
        await device.close()
    }
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
