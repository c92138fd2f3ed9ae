import TrellisSyncProtocol

/// An error of a sync session: Realm's `SyncError`, with Realm's codes. `serverCode` is the
/// sync protocol's error number (docs/SYNC.md, "Errors") when the server reported it.
public struct SyncError: Error, CustomStringConvertible, Sendable {
    /// Realm's sync error codes.
    public enum Code: Int, Sendable {
        case clientSessionError = 1
        case clientUserError = 2
        case clientInternalError = 3
        case clientResetError = 7
        case underlyingAuthError = 9
        case permissionDeniedError = 10
        case invalidFlexibleSyncSubscriptions = 11
        case writeRejected = 12
    }

    public let code: Code
    /// The protocol error number (`SyncErrorCode`), e.g. 202 for an expired token.
    public let serverCode: Int?
    public let message: String
    /// The session stopped because of it (a fatal server error).
    public let isFatal: Bool

    public var description: String { "SyncError(\(code)\(serverCode.map { ", server code \($0)" } ?? "")): \(message)" }
    public var localizedDescription: String { message }

    init(code: Code, message: String, serverCode: Int? = nil, isFatal: Bool = false) {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.isFatal = isFatal
    }

    /// The client-side error of a server's error frame.
    init(_ frame: SyncMessage.ErrorMessage) {
        let code: Code = switch SyncErrorCode(rawValue: frame.code) {
        case .tokenExpired, .badAuthentication: .underlyingAuthError
        case .badQuery: .invalidFlexibleSyncSubscriptions
        case .writeNotAllowed: .writeRejected
        default: .clientSessionError
        }
        self.init(code: code, message: frame.message, serverCode: frame.code, isFatal: frame.isFatal)
    }
}
