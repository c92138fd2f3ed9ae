import Foundation
import JWTKit

/// Login tokens as a customer's auth service would sign them for the Custom JWT provider.
enum TestTokens {
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var typ: String?
        /// Metadata a customer's auth service adds (`metadata_fields` map it to `%%user.data`).
        var user_data: [String: String]?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// An HS256 token for `subject`, signed with `key` (the test server's `--jwt-key` by default).
    static func login(_ subject: String, key: String = testJWTKey, expires: Date = Date().addingTimeInterval(600),
                      kind: String? = nil, userData: [String: String]? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: SubjectClaim(value: subject), exp: ExpirationClaim(value: expires), typ: kind,
                                          user_data: userData))
    }
}
