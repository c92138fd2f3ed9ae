import Foundation
import Testing
import Trellis
import TrellisSync
@testable import TrellisSyncServer

/// TLS between the server and PostgreSQL (issue 39): the URL's `sslmode` and `sslrootcert` are
/// honoured, against a throwaway PostgreSQL started with `ssl=on` and a certificate made for
/// the test (`Scripts/postgres.sh start DIR --ssl`).
@Suite(.serialized)
struct PostgresTLSTests {
    /// A PostgreSQL with TLS on, stopped when `body` returns; its URL and its certificate.
    private func withTLSPostgres(_ body: (_ url: String, _ certificate: String, _ folder: URL) async throws -> Void)
        async throws
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-tls-pg-\(UUID().uuidString)")
        defer {
            _ = try? runTool("/bin/bash", [PostgresFixture.scriptPath, "stop", folder.path])
            try? FileManager.default.removeItem(at: folder)
        }
        let output = try runTool("/bin/bash", [PostgresFixture.scriptPath, "start", folder.path, "--ssl"])
        let base = try output.split(separator: "\n").last.map(String.init).unwrapped("the TLS PostgreSQL's URL")
        try await body(base, folder.appendingPathComponent("server.crt").path, folder)
    }

    private func makeDatabase(_ base: String, _ name: String) throws -> String {
        try PostgresFixture.psql(base + "?sslmode=disable", "CREATE DATABASE \(name)")
        let slash = try base.lastIndex(of: "/").unwrapped("a slash in \(base)")
        return String(base[...slash]) + name
    }

    @Test func serverConnectsOverTLSWithSslmodeVerifyFullAndRequire() async throws {
        try await withTLSPostgres { base, certificate, _ in
            for (index, query) in ["sslmode=verify-full&sslrootcert=\(certificate)", "sslmode=require"].enumerated() {
                let database = try makeDatabase(base, "tls_\(index)")
                let server = try ServerProcess(database: database + "?" + query, schema: try makeSchemaFile())
                let device = try await Device(server: server)
                try device.write { $0.add(SyncDog(value: ["name": "Rex \(index)"])) }
                try await device.sync()
                #expect(try PostgresFixture.psql(database + "?sslmode=disable", "SELECT count(*) FROM \"SyncDog\"") == "1")
                // Every connection of the server to its database is encrypted (this query's own is not).
                let counts = try PostgresFixture.psql(database + "?sslmode=disable", """
                    SELECT count(*) FILTER (WHERE s.ssl) || '/' || count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
                    WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
                    """)
                let parts = counts.split(separator: "/").compactMap { Int($0) }
                #expect(parts.count == 2 && parts[0] == parts[1] && parts[0] >= 1, "\(query): TLS/all = \(counts)")
                await device.close()
                server.kill()
            }
        }
    }

    @Test func verifyFullRefusesAServerCertificateTheGivenCADidNotSign() async throws {
        try await withTLSPostgres { base, _, folder in
            let other = folder.appendingPathComponent("other.crt").path
            try runTool("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                         "-subj", "/CN=127.0.0.1", "-keyout", folder.appendingPathComponent("other.key").path,
                                         "-out", other])
            let database = try makeDatabase(base, "tls_wrong_ca")
            #expect {
                _ = try ServerProcess(database: database + "?sslmode=verify-full&sslrootcert=\(other)",
                                      schema: try makeSchemaFile())
            } throws: { error in
                "\(error)".contains("Could not prepare the database")
            }
        }
    }

    @Test func sslmodeAndSslrootcertAreReadFromTheURL() throws {
        let plain = try PostgresURL("postgres://me@db.example.com:6543/app")
        #expect(plain.sslMode == .disable && plain.sslRootCert == nil && plain.port == 6543)
        let full = try PostgresURL("postgres://me:pw@db.example.com/app?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(full.sslMode == .verifyFull && full.sslRootCert == "/etc/ca.pem" && full.database == "app")
        #expect(try PostgresURL("postgresql://me@h/app?sslmode=require").sslMode == .require)
        #expect(throws: OptionError.self) { try PostgresURL("postgres://me@h/app?sslmode=always") }
        #expect(throws: OptionError.self) { try PostgresURL("postgres://me@h/app?connect_timeout=5") }
        // Messages name the database without the password.
        #expect(full.described == "postgres://me@db.example.com:5432/app?sslmode=verify-full")
        #expect(plain.described == "postgres://me@db.example.com:6543/app")
        // A root certificate that cannot be read is an error at start, not a silent default.
        #expect(throws: OptionError.self) { try PostgresURL("postgres://me@h/app?sslmode=verify-ca&sslrootcert=/nonexistent").tls() }
    }
}
