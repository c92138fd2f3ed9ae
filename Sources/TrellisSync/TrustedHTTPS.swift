import AsyncHTTPClient
import Foundation
import NIOSSL

/// TLS with the app's own trust roots (``AppConfiguration/trustedRootCertificatesURL``): a
/// private CA, or a self-signed server certificate in tests. The HTTP requests (login, token
/// refresh) then go through AsyncHTTPClient, since URLSession on Linux cannot be given trust
/// roots; the sync WebSocket gets the same ``TLSConfiguration``.
enum TrustedHTTPS {
    /// A client configuration that trusts exactly the PEM certificates at `url`.
    static func configuration(trusting url: URL) throws -> TLSConfiguration {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(try Data(contentsOf: url)))
        } catch {
            throw AppError(code: .badRequest, message: "AppConfiguration.trustedRootCertificatesURL \(url.path) cannot be "
                + "read as PEM certificates (\(error)): give a readable PEM file of the CA certificates to trust.",
                httpStatusCode: nil)
        }
        guard !certificates.isEmpty else {
            throw AppError(code: .badRequest, message: "AppConfiguration.trustedRootCertificatesURL \(url.path) holds no "
                + "PEM certificate (-----BEGIN CERTIFICATE-----).", httpStatusCode: nil)
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(certificates)
        return configuration
    }

    /// One request; the answer's status and body. Throws what the connection threw (a
    /// certificate that does not verify, a refused connection, a timeout).
    static func send(_ method: String, _ url: String, headers: [(String, String)], body: Data?, timeoutMS: UInt,
                     tls: TLSConfiguration) async throws -> (status: Int, body: Data) {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                                configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .init(rawValue: method)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(Array(body)) }
            let response = try await client.execute(request, timeout: .milliseconds(Int64(timeoutMS)))
            var data = Data()
            for try await chunk in response.body { data.append(contentsOf: chunk.readableBytesView) }
            try await client.shutdown()
            return (Int(response.status.code), data)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
