import Foundation
import Testing
import Trellis
import TrellisSync

/// TLS between clients and the server (issue 39, docs/SYNC.md "TLS to clients"):
/// `trellis-sync --tls-cert --tls-key` serves HTTPS and WSS; an ``App`` that trusts the
/// server's self-signed certificate (made here with the openssl CLI) logs in and syncs over
/// `https://`/`wss://`, one that does not is refused; bad certificate files stop the server
/// with the reason.
@Suite(.serialized)
struct ClientTLSTests {
    /// A self-signed certificate for localhost and 127.0.0.1 and its key, in a new folder. (The
    /// devices use `localhost`: swift-websocket sends the URL's host as SNI, which NIOSSL
    /// refuses for an IP address.)
    static func makeCertificate(in folder: URL, name: String = "server") throws -> (certificate: URL, key: URL) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("\(name).crt"), key = folder.appendingPathComponent("\(name).key")
        _ = try runTool("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                         "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                                         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key.path,
                                         "-out", certificate.path])
        return (certificate, key)
    }

    static func device(_ baseURL: String, trusting roots: URL?) async throws -> Device {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let app = App(id: "trellis", configuration: AppConfiguration(baseURL: baseURL, rootDirectory: directory,
                                                                     trustedRootCertificatesURL: roots))
        let user = try await app.login(credentials: .anonymous)
        return Device(app: app, user: user, directory: directory, ownsDirectory: true)
    }

    @Test func devicesTrustingTheServersCertificateSyncOverHTTPSAndWSS() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = try Self.makeCertificate(in: folder)
        let database = try PostgresFixture.makeDatabase()
        let server = try ServerProcess(database: database, schema: try makeSchemaFile(),
                                       arguments: ["--tls-cert", certificate.path, "--tls-key", key.path])
        let baseURL = "https://localhost:\(server.port)"
        let a = try await Self.device(baseURL, trusting: certificate)
        let b = try await Self.device(baseURL, trusting: certificate)
        try a.write { $0.add(SyncTask(value: ["title": "over TLS"])) }
        try await a.sync()
        try await b.sync()
        #expect(try b.run { $0.objects(SyncTask.self).map(\.title) } == ["over TLS"])
        #expect(try PostgresFixture.psql(database, "SELECT count(*) FROM \"SyncTask\"") == "1")

        // Without the trust root (the system's roots do not know a self-signed certificate),
        // and over plain HTTP, the app cannot log in.
        await #expect {
            _ = try await testApp(baseURL).login(credentials: .anonymous)
        } throws: { error in
            (error as? AppError)?.code == .httpRequestFailed
        }
        await #expect(throws: AppError.self) {
            _ = try await testApp("http://127.0.0.1:\(server.port)").login(credentials: .anonymous)
        }
        // Trusting another certificate: refused too.
        let (other, _) = try Self.makeCertificate(in: folder, name: "other")
        await #expect {
            _ = try await Self.device(baseURL, trusting: other)
        } throws: { error in
            (error as? AppError)?.code == .httpRequestFailed
        }
        await a.close()
        await b.close()
    }

    @Test func unreadableOrMismatchedCertificateFilesStopTheServerWithTheReason() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = try Self.makeCertificate(in: folder)
        let (_, otherKey) = try Self.makeCertificate(in: folder, name: "other")
        let notPEM = folder.appendingPathComponent("not.pem")
        try Data("hello".utf8).write(to: notPEM)
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        let cases: [([String], String)] = [
            (["--tls-cert", folder.appendingPathComponent("missing.crt").path, "--tls-key", key.path],
             "--tls-cert \(folder.path)/missing.crt cannot be read"),
            (["--tls-cert", notPEM.path, "--tls-key", key.path], "holds no PEM certificate"),
            (["--tls-cert", certificate.path, "--tls-key", notPEM.path], "holds no PEM private key"),
            (["--tls-cert", certificate.path, "--tls-key", otherKey.path], "is not the private key of the certificate"),
            (["--tls-cert", certificate.path], "--tls-cert and --tls-key go together"),
        ]
        for (arguments, reason) in cases {
            #expect {
                _ = try ServerProcess(database: database, schema: schema, arguments: arguments)
            } throws: { error in
                "\(error)".contains(reason)
            }
        }
    }
}
