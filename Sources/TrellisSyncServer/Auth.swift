import Foundation
import JWTKit
import TrellisSyncProtocol

/// The claims of the access tokens this server issues (and of `.jwt` login tokens): the user
/// id (`sub`), expiry (`exp`) and app (`aud`).
struct AccessClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var aud: AudienceClaim?

    /// Expiry is checked after the signature (see ``Authenticator/verify(_:)``), so an expired
    /// token and a forged one give different errors.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// Why a token was refused.
struct AuthFailure: Error {
    var code: SyncErrorCode
    var message: String
}

/// Signs and verifies tokens with the server's HS256 key. Stateless: every server process
/// with the same key accepts the same tokens.
struct Authenticator: Sendable {
    let keys: JWTKeyCollection
    let appId: String
    let lifetime: Int

    init(key: String, appId: String, lifetime: Int) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        self.keys = keys
        self.appId = appId
        self.lifetime = lifetime
    }

    /// A new access token for `userId`.
    func issue(userId: String) async throws -> String {
        let claims = AccessClaims(sub: SubjectClaim(value: userId),
                                  exp: ExpirationClaim(value: Date().addingTimeInterval(Double(lifetime))),
                                  aud: AudienceClaim(value: [appId]))
        return try await keys.sign(claims)
    }

    /// The user id of a valid token; ``AuthFailure`` for a forged, malformed or expired one.
    func verify(_ token: String) async throws(AuthFailure) -> String {
        let claims: AccessClaims
        do {
            claims = try await keys.verify(token, as: AccessClaims.self)
        } catch {
            throw AuthFailure(code: .badAuthentication, message: "The token was refused: its signature does not match "
                + "the server's key, or it is not a JWT (\(error)). Log in again with a token signed by the key the "
                + "server was started with (--jwt-key).")
        }
        if claims.exp.value < Date() {
            throw AuthFailure(code: .tokenExpired, message: "The token expired at \(claims.exp.value). Log in again "
                + "for a new one.")
        }
        if let audience = claims.aud?.value, !audience.isEmpty, !audience.contains(appId) {
            throw AuthFailure(code: .badAuthentication, message: "The token is for the app \(audience), not '\(appId)'.")
        }
        return claims.sub.value
    }
}
