import Foundation
import Hummingbird
import HummingbirdWebSocket
import TrellisSyncProtocol

/// The login endpoints, at Atlas App Services' paths: anonymous users get a new id; a `.jwt`
/// login must carry a token signed with the server's key (its `sub` is the user id).
enum LoginRoutes {
    static func add(to router: Router<BasicWebSocketRequestContext>, authenticator: Authenticator,
                    options: ServerOptions) {
        router.post("/api/client/v2.0/app/:appId/auth/providers/:provider/login") { request, context -> Response in
            guard context.parameters.get("appId") == options.appId else {
                return json(.notFound, ["error": "No app '\(context.parameters.get("appId") ?? "")' on this server "
                    + "(it serves '\(options.appId)').", "error_code": "AppNotFound"])
            }
            let userId: String
            switch context.parameters.get("provider") {
            case "anon-user":
                userId = UUID().uuidString.lowercased()
            case "custom-token":
                let body = try await request.body.collect(upTo: 1 << 20)
                let fields = try? JSONValue(jsonText: String(buffer: body))
                guard let token = fields?["token"]?.stringValue else {
                    return json(.badRequest, ["error": "The body must be {\"token\": \"<JWT>\"}.", "error_code": "BadRequest"])
                }
                do {
                    userId = try await authenticator.verify(token)
                } catch let error as AuthFailure {
                    return json(.unauthorized, ["error": error.message,
                                                "error_code": error.code == .tokenExpired ? "InvalidSession" : "AuthError"])
                } catch {
                    return json(.unauthorized, ["error": "\(error)", "error_code": "AuthError"])
                }
            default:
                return json(.badRequest, ["error": "Unknown login provider '\(context.parameters.get("provider") ?? "")'.",
                                          "error_code": "AuthProviderNotFound"])
            }
            let token = try await authenticator.issue(userId: userId)
            return json(.ok, ["access_token": token, "refresh_token": token, "user_id": userId,
                              "device_id": "000000000000000000000000"])
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        let text = JSONValue.object(fields.mapValues(JSONValue.string)).jsonText
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
