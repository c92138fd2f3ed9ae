import Foundation
import Trellis
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
    /// With `.writeRejected`: the writes the server's permissions refused (Realm's
    /// compensating writes); each was undone on this device when the server sent the object
    /// back as it keeps it.
    public let compensatingWriteInfo: [CompensatingWriteInfo]?
    /// With `.clientResetError` in `.manual` mode: the action of ``clientResetInfo()``.
    let actionToken: ActionToken?

    public var description: String { "SyncError(\(code)\(serverCode.map { ", server code \($0)" } ?? "")): \(message)" }
    public var localizedDescription: String { message }

    init(code: Code, message: String, serverCode: Int? = nil, isFatal: Bool = false,
         compensatingWriteInfo: [CompensatingWriteInfo]? = nil, actionToken: ActionToken? = nil) {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.isFatal = isFatal
        self.compensatingWriteInfo = compensatingWriteInfo
        self.actionToken = actionToken
    }

    /// The client-side error of a server's error frame.
    init(_ frame: SyncMessage.ErrorMessage) {
        let code: Code = switch SyncErrorCode(rawValue: frame.code) {
        case .tokenExpired, .badAuthentication: .underlyingAuthError
        case .badQuery: .invalidFlexibleSyncSubscriptions
        case .writeNotAllowed, .compensatingWrite: .writeRejected
        case .badServerFileIdent, .badServerVersion, .clientFileExpired: .clientResetError
        default: .clientSessionError
        }
        self.init(code: code, message: frame.message, serverCode: frame.code, isFatal: frame.isFatal,
                  compensatingWriteInfo: frame.compensatingWrites?.map(CompensatingWriteInfo.init))
    }
}

/// One write the server refused and undid: Realm's `CompensatingWriteInfo`.
public struct CompensatingWriteInfo: CustomStringConvertible, @unchecked Sendable {
    // @unchecked Sendable: `primaryKey` holds a scalar (never an object or a collection).
    /// The class of the object written.
    public let objectType: String
    /// Why the server refused it (which rule).
    public let reason: String
    /// The object's primary key.
    public let primaryKey: AnyRealmValue

    init(_ write: SyncMessage.CompensatingWrite) {
        objectType = write.className
        reason = write.reason
        primaryKey = Self.value(of: write.primaryKey)
    }

    public var description: String { "\(objectType) \(primaryKey): \(reason)" }

    /// A primary key in Extended JSON as a Realm value.
    private static func value(of key: JSONValue) -> AnyRealmValue {
        switch key {
        case .string(let text): return .string(text)
        case .int(let number): return .int(Int(number))
        case .object(let object):
            if let oid = object["$oid"]?.stringValue, let id = try? ObjectId(string: oid) { return .objectId(id) }
            if let text = object["$numberLong"]?.stringValue ?? object["$numberInt"]?.stringValue, let number = Int(text) {
                return .int(number)
            }
            if let base64 = object["$binary"]?["base64"]?.stringValue, let data = Data(base64Encoded: base64),
               data.count == 16 {
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            }
            return .string(key.jsonText)
        default: return .string(key.jsonText)
        }
    }
}
