import Foundation
import JWTKit
import TrellisSyncProtocol

/// The claims of the tokens this server issues and of `.jwt` login tokens: the user id
/// (`sub`), expiry (`exp`), app (`aud`), and for the server's own tokens their kind (`typ`:
/// `access` or `refresh`) and, for a refresh token, its id in `trellis_refresh_tokens` (`jti`).
struct TokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var aud: AudienceClaim?
    var typ: String?
    var jti: IDClaim?

    /// Expiry is checked after the signature (see ``Authenticator``), so an expired token and a
    /// forged one give different errors.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// Why a token was refused.
struct AuthFailure: Error {
    var code: SyncErrorCode
    var message: String
}

/// Signs and verifies tokens. Access and refresh tokens are signed with the server's signing
/// key (one random key kept in PostgreSQL, shared by every server process: ``TokenStore``);
/// `.jwt` logins are verified with the Custom JWT provider's key (`--jwt-key`), which never
/// signs anything here, so a login token cannot pass as an access token nor the other way.
struct Authenticator: Sendable {
    let signing: JWTKeyCollection
    let login: JWTKeyCollection?
    let appId: String
    let accessLifetime: Int
    let refreshLifetime: Int

    init(signingKey: String, loginKey: String?, appId: String, accessLifetime: Int, refreshLifetime: Int) async {
        signing = JWTKeyCollection()
        await signing.add(hmac: HMACKey(from: signingKey), digestAlgorithm: .sha256)
        if let loginKey {
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: loginKey), digestAlgorithm: .sha256)
            login = keys
        } else {
            login = nil
        }
        self.appId = appId
        self.accessLifetime = accessLifetime
        self.refreshLifetime = refreshLifetime
    }

    /// A new access token for `userId` (the only token a sync session accepts).
    func issueAccess(userId: String) async throws -> String {
        try await signing.sign(TokenClaims(sub: SubjectClaim(value: userId),
                                           exp: ExpirationClaim(value: Date().addingTimeInterval(Double(accessLifetime))),
                                           aud: AudienceClaim(value: [appId]), typ: "access"))
    }

    /// A new refresh token for `userId` with the id `tokenId` (stored by the caller).
    func issueRefresh(userId: String, tokenId: UUID, expires: Date) async throws -> String {
        try await signing.sign(TokenClaims(sub: SubjectClaim(value: userId), exp: ExpirationClaim(value: expires),
                                           aud: AudienceClaim(value: [appId]), typ: "refresh",
                                           jti: IDClaim(value: tokenId.uuidString.lowercased())))
    }

    /// The user id of a valid access token.
    func verifyAccess(_ token: String) async throws(AuthFailure) -> String {
        let claims = try await verify(token, with: signing, expecting: "access")
        return claims.sub.value
    }

    /// The user id and token id of a validly signed, unexpired refresh token (whether it was
    /// revoked is the ``TokenStore``'s to say).
    func verifyRefresh(_ token: String) async throws(AuthFailure) -> (userId: String, tokenId: UUID) {
        let claims = try await verify(token, with: signing, expecting: "refresh")
        guard let id = claims.jti.flatMap({ UUID(uuidString: $0.value) }) else {
            throw AuthFailure(code: .badAuthentication, message: "The refresh token has no token id (jti).")
        }
        return (claims.sub.value, id)
    }

    /// The user id of a Custom JWT provider login token.
    func verifyLogin(_ token: String) async throws(AuthFailure) -> String {
        guard let login else {
            throw AuthFailure(code: .badAuthentication, message: "This server has no key for JWT logins: start it "
                + "with --jwt-key (the key your auth service signs tokens with) and --auth jwt.")
        }
        return try await verify(token, with: login, expecting: nil).sub.value
    }

    /// The claims of a login token (call after ``verifyLogin(_:)`` accepted it): its payload
    /// as JSON, for the provider's `metadata_fields`.
    static func claims(of token: String) -> [String: JSONValue] {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return [:] }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return [:] }
        return (try? JSONValue(jsonText: String(decoding: data, as: UTF8.self)))?.objectValue ?? [:]
    }

    private func verify(_ token: String, with keys: JWTKeyCollection, expecting kind: String?)
        async throws(AuthFailure) -> TokenClaims
    {
        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self)
        } catch {
            let which = kind == nil ? "the key the server was started with (--jwt-key)" : "this server's signing key"
            throw AuthFailure(code: .badAuthentication, message: "The token was refused: its signature does not match "
                + "\(which), or it is not a JWT (\(error)). Log in again.")
        }
        if claims.exp.value < Date() {
            throw AuthFailure(code: .tokenExpired, message: "The token expired at \(claims.exp.value). "
                + (kind == "access" ? "Refresh it with the refresh token." : "Log in again for a new one."))
        }
        if claims.sub.value.isEmpty {
            throw AuthFailure(code: .badAuthentication, message: "The token's 'sub' claim (the user id) is empty.")
        }
        if let audience = claims.aud?.value, !audience.isEmpty, !audience.contains(appId) {
            throw AuthFailure(code: .badAuthentication, message: "The token is for the app \(audience), not '\(appId)'.")
        }
        if let kind, claims.typ != kind {
            throw AuthFailure(code: .badAuthentication, message: "The token is of the kind '\(claims.typ ?? "login")' "
                + "where a '\(kind)' token is needed.")
        }
        return claims
    }
}
