import Foundation
import PostgresNIO

/// libpq's `sslmode` values, as a `?sslmode=` of the PostgreSQL URL (managed PostgreSQL services
/// give URLs with `sslmode=require` or `verify-full`).
enum SSLMode: String, CaseIterable, Sendable {
    /// No TLS.
    case disable
    /// TLS if the server offers it, without verifying it (`allow` is read as `prefer`).
    case allow, prefer
    /// TLS or no connection; the certificate is verified only when `sslrootcert` is given
    /// (then as `verify-ca`), as libpq does.
    case require
    /// TLS, the certificate signed by `sslrootcert` (or the system's CAs), any host name.
    case verifyCA = "verify-ca"
    /// TLS, the certificate signed by `sslrootcert` (or the system's CAs) and naming the host.
    case verifyFull = "verify-full"
}

extension PostgresURL {
    /// The connection's TLS setting for `sslMode` and `sslRootCert`.
    func tls() throws -> PostgresClient.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let sslRootCert {
            guard FileManager.default.isReadableFile(atPath: sslRootCert) else {
                throw OptionError("sslrootcert '\(sslRootCert)' in the PostgreSQL URL is not a readable file of CA "
                    + "certificates (PEM).")
            }
            configuration.trustRoots = .file(sslRootCert)
        }
        switch sslMode {
        case .disable:
            return .disable
        case .allow, .prefer:
            configuration.certificateVerification = .none
            return try .prefer(configuration)
        case .require where sslRootCert == nil:
            configuration.certificateVerification = .none
            return try .require(configuration)
        case .require, .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
            return try .require(configuration)
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
            return try .require(configuration)
        }
    }
}
