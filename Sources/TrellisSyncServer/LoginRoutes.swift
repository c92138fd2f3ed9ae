import Foundation
import Hummingbird
import HummingbirdWebSocket
import TrellisSyncProtocol

/// The auth endpoints, at Atlas App Services' paths:
/// - `POST …/app/:appId/auth/providers/:provider/login`: `anon-user` (a new user id) or
///   `custom-token` (a JWT signed with `--jwt-key`; its `sub` is the user id), each only when
///   switched on with `--auth`. Answers an access token and a refresh token.
/// - `POST /api/client/v2.0/auth/session` with `Authorization: Bearer <refresh token>`: a new
///   access token (only a refresh token, unrevoked and unexpired, gets one).
/// - `DELETE /api/client/v2.0/auth/session` with the refresh token: revokes it (log out).
enum LoginRoutes {
    /// `metadataFields`: the Custom JWT provider's `metadata_fields`; a JWT login stores those
    /// claims as the user's data (`%%user.data` in rules), replacing what an earlier login stored.
    static func add(to router: Router<BasicWebSocketRequestContext>, authenticator: Authenticator, tokens: TokenStore,
                    options: ServerOptions, metadataFields: [JWTMetadataField]) {
        router.post("/api/client/v2.0/app/:appId/auth/providers/:provider/login") { request, context -> Response in
            guard context.parameters.get("appId") == options.appId else {
                return json(.notFound, ["error": "No app '\(context.parameters.get("appId") ?? "")' on this server "
                    + "(it serves '\(options.appId)').", "error_code": "AppNotFound"])
            }
            let providerName = context.parameters.get("provider") ?? ""
            guard let provider = AuthProvider(pathName: providerName) else {
                return json(.badRequest, ["error": "Unknown login provider '\(providerName)' (known: anon-user, "
                    + "custom-token).", "error_code": "AuthProviderNotFound"])
            }
            guard options.authProviders.contains(provider) else {
                return json(.unauthorized, ["error": "The login provider '\(providerName)' is not enabled on this "
                    + "server (start it with --auth \(provider.rawValue) to allow it).", "error_code": "AuthProviderNotFound"])
            }
            let userId: String
            switch provider {
            case .anonymous:
                userId = UUID().uuidString.lowercased()
            case .jwt:
                let body = try await request.body.collect(upTo: 1 << 20)
                let fields = try? JSONValue(jsonText: String(buffer: body))
                guard let token = fields?["token"]?.stringValue else {
                    return json(.badRequest, ["error": "The body must be {\"token\": \"<JWT>\"}.", "error_code": "BadRequest"])
                }
                do {
                    userId = try await authenticator.verifyLogin(token)
                } catch let error as AuthFailure {
                    return json(.unauthorized, ["error": error.message,
                                                "error_code": error.code == .tokenExpired ? "InvalidSession" : "AuthError"])
                }
                do {
                    let data = try JWTMetadataField.userData(metadataFields, claims: Authenticator.claims(of: token))
                    try await tokens.setUserData(userId: userId, data: data)
                } catch let error as RulesError {
                    return json(.unauthorized, ["error": error.description, "error_code": "AuthError"])
                }
            }
            let tokenId = UUID()
            let expires = Date().addingTimeInterval(Double(authenticator.refreshLifetime))
            try await tokens.add(tokenId: tokenId, userId: userId, provider: provider.pathName, expires: expires)
            let refresh = try await authenticator.issueRefresh(userId: userId, tokenId: tokenId, expires: expires)
            let access = try await authenticator.issueAccess(userId: userId)
            return json(.ok, ["access_token": access, "refresh_token": refresh, "user_id": userId,
                              "device_id": "000000000000000000000000"])
        }
        router.post("/api/client/v2.0/auth/session") { request, _ -> Response in
            switch await refreshToken(request, authenticator: authenticator, tokens: tokens) {
            case .failure(let failure): return failure.response
            case .success(let (userId, _)):
                return json(.created, ["access_token": try await authenticator.issueAccess(userId: userId)])
            }
        }
        router.delete("/api/client/v2.0/auth/session") { request, _ -> Response in
            switch await refreshToken(request, authenticator: authenticator, tokens: tokens) {
            case .failure(let failure): return failure.response
            case .success(let (_, tokenId)):
                try await tokens.revoke(tokenId: tokenId)
                return Response(status: .noContent)
            }
        }
    }

    /// The user and token id of the request's valid refresh token, or the error answer.
    private static func refreshToken(_ request: Request, authenticator: Authenticator, tokens: TokenStore) async
        -> Result<(String, UUID), ResponseFailure>
    {
        let header = request.headers[.authorization] ?? ""
        guard header.hasPrefix("Bearer ") else {
            return .failure(ResponseFailure(json(.unauthorized, ["error": "The request needs 'Authorization: Bearer "
                + "<refresh token>'.", "error_code": "InvalidSession"])))
        }
        do {
            let (userId, tokenId) = try await authenticator.verifyRefresh(String(header.dropFirst(7)))
            guard (try? await tokens.isValid(tokenId: tokenId, userId: userId)) == true else {
                return .failure(ResponseFailure(json(.unauthorized, ["error": "The refresh token was revoked or has "
                    + "expired: log in again.", "error_code": "InvalidSession"])))
            }
            return .success((userId, tokenId))
        } catch {
            return .failure(ResponseFailure(json(.unauthorized, ["error": error.message, "error_code": "InvalidSession"])))
        }
    }

    struct ResponseFailure: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    static func json(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        let text = JSONValue.object(fields.mapValues(JSONValue.string)).jsonText
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// A login provider that `--auth` switches on.
enum AuthProvider: String, Sendable, CaseIterable {
    case anonymous
    case jwt

    /// App Services' name in the login path.
    var pathName: String { self == .anonymous ? "anon-user" : "custom-token" }

    init?(pathName: String) {
        switch pathName {
        case "anon-user": self = .anonymous
        case "custom-token": self = .jwt
        default: return nil
        }
    }
}
