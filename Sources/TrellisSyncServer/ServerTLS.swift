import Foundation
import NIOSSL

/// The TLS the server serves clients with (`--tls-cert`, `--tls-key`; docs/SYNC.md, "TLS to
/// clients"): the PEM certificate chain and its private key, read and checked at start so an
/// unreadable file, a file without a certificate or key, or a key that is not the
/// certificate's stops the server with the reason.
enum ServerTLS {
    static func configuration(certificatePath: String, keyPath: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(try read(certificatePath, flag: "--tls-cert")))
        } catch let error as OptionError {
            throw error
        } catch {
            throw OptionError("--tls-cert \(certificatePath) holds no PEM certificate (\(error)): give the server's "
                + "certificate chain in PEM form (-----BEGIN CERTIFICATE-----), leaf first.")
        }
        guard !chain.isEmpty else {
            throw OptionError("--tls-cert \(certificatePath) holds no PEM certificate: give the server's certificate "
                + "chain in PEM form (-----BEGIN CERTIFICATE-----), leaf first.")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(try read(keyPath, flag: "--tls-key")), format: .pem)
        } catch let error as OptionError {
            throw error
        } catch {
            throw OptionError("--tls-key \(keyPath) holds no PEM private key (\(error)): give the certificate's "
                + "private key in PEM form (-----BEGIN PRIVATE KEY-----), not encrypted.")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(key))
        // The context checks that the key belongs to the leaf certificate.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw OptionError("--tls-key \(keyPath) is not the private key of the certificate in --tls-cert "
                + "\(certificatePath) (\(error)): give the key the certificate was made with.")
        }
        return configuration
    }

    private static func read(_ path: String, flag: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw OptionError("\(flag) \(path) cannot be read (\((error as NSError).localizedDescription)): check the "
                + "path and that this user may read it.")
        }
    }
}
