import Foundation

/// The messages of the Trellis sync protocol: JSON text frames over one WebSocket per client
/// (see docs/SYNC.md). Every frame is one ``SyncMessage``.
public enum SyncProtocol {
    /// Bumped when a message changes incompatibly; the server refuses other versions.
    public static let version = 1
}

/// One frame of the protocol, either direction.
public enum SyncMessage: Codable, Sendable, Equatable {
    /// Client, first frame: who it is and what it wants.
    case hello(Hello)
    /// Client: local changes, in commit order.
    case upload(Upload)
    /// Client: a new subscription set.
    case subscribe(Subscribe)
    /// Server: the session is open.
    case welcome(Welcome)
    /// Server: an upload is stored (its changes are in the history up to `serverVersion`).
    case ack(Ack)
    /// Server: changes from the history, or a subscription bootstrap.
    case download(Download)
    /// Server or client: something failed; `isFatal` closes the session.
    case error(ErrorMessage)
    /// Client: a marker; the server echoes it once it has sent everything its history held
    /// when the marker arrived (`wait(for: .download)`).
    case mark(Mark)

    public struct Mark: Codable, Sendable, Equatable {
        public var id: Int64
        public init(id: Int64) { self.id = id }
    }

    public struct Hello: Codable, Sendable, Equatable {
        public var protocolVersion: Int
        public var appId: String
        public var accessToken: String
        public var clientId: String
        public var schemaVersion: UInt64
        /// Per class, the App Services JSON schema of the client's model.
        public var schema: [String: JSONValue]
        /// The newest server version this client has applied (0: none).
        public var lastServerVersion: Int64
        public var subscriptions: SubscriptionSet
        /// The identity of the server history the client synced with (``Welcome/serverEpoch``;
        /// nil: none yet, or a client reset asking for a fresh start). Another identity than
        /// the server's means that history is gone: the server answers with a client reset.
        public var serverEpoch: String?
        public init(protocolVersion: Int = SyncProtocol.version, appId: String, accessToken: String, clientId: String,
                    schemaVersion: UInt64, schema: [String: JSONValue], lastServerVersion: Int64,
                    subscriptions: SubscriptionSet, serverEpoch: String? = nil) {
            self.protocolVersion = protocolVersion
            self.appId = appId
            self.accessToken = accessToken
            self.clientId = clientId
            self.schemaVersion = schemaVersion
            self.schema = schema
            self.lastServerVersion = lastServerVersion
            self.subscriptions = subscriptions
            self.serverEpoch = serverEpoch
        }
    }

    public struct Upload: Codable, Sendable, Equatable {
        /// The client's number of the last outbox entry in this upload.
        public var uploadId: Int64
        /// The number of the first: the changes are entries `firstChangeId…uploadId`, one number
        /// each. An upload sent again after a lost acknowledgement may start at an entry the server
        /// applied already, when the outbox grew in between (its boundaries changed): the server
        /// applies only the entries after the last one it applied. Nil (older clients): the
        /// upload is applied whole unless `uploadId` was applied.
        public var firstChangeId: Int64?
        public var changes: [SyncObjectChange]
        public init(uploadId: Int64, firstChangeId: Int64? = nil, changes: [SyncObjectChange]) {
            self.uploadId = uploadId
            self.firstChangeId = firstChangeId
            self.changes = changes
        }

        /// The upload without its entries numbered `applied` or lower, when it starts at or
        /// below `applied` and ends above it; nil otherwise (nothing to leave out, or no numbers).
        public func unapplied(after applied: Int64) -> Upload? {
            guard let first = firstChangeId, applied >= first, applied < uploadId,
                  uploadId - first + 1 == Int64(changes.count) else { return nil }
            return Upload(uploadId: uploadId, firstChangeId: applied + 1,
                          changes: Array(changes.dropFirst(Int(applied - first + 1))))
        }
    }

    public struct Subscribe: Codable, Sendable, Equatable {
        public var subscriptions: SubscriptionSet
        public init(subscriptions: SubscriptionSet) { self.subscriptions = subscriptions }
    }

    public struct Welcome: Codable, Sendable, Equatable {
        public var userId: String
        public var serverVersion: Int64
        /// The identity of the server's history (`trellis_server_identity.epoch`): made once by
        /// the first server of a database, so a database dropped and recreated (or restored
        /// elsewhere) has another one. The client keeps it with the versions it applied.
        public var serverEpoch: String?
        public init(userId: String, serverVersion: Int64, serverEpoch: String? = nil) {
            self.userId = userId
            self.serverVersion = serverVersion
            self.serverEpoch = serverEpoch
        }
    }

    public struct Ack: Codable, Sendable, Equatable {
        public var uploadId: Int64
        public var serverVersion: Int64
        public init(uploadId: Int64, serverVersion: Int64) {
            self.uploadId = uploadId
            self.serverVersion = serverVersion
        }
    }

    public struct Download: Codable, Sendable, Equatable {
        public var changes: [ServerChange]
        /// The client has every change up to this version once it applied these.
        public var serverVersion: Int64
        /// Set on the last frame of a bootstrap: the subscription set now complete. Objects of
        /// no subscription are then removed locally.
        public var completesSubscriptionVersion: Int64?
        /// More frames of the same bootstrap or catch-up follow.
        public var hasMore: Bool
        public init(changes: [ServerChange], serverVersion: Int64, completesSubscriptionVersion: Int64? = nil,
                    hasMore: Bool = false) {
            self.changes = changes
            self.serverVersion = serverVersion
            self.completesSubscriptionVersion = completesSubscriptionVersion
            self.hasMore = hasMore
        }
    }

    public struct ErrorMessage: Codable, Sendable, Equatable {
        /// Realm's sync error code where one exists (see ``SyncErrorCode``).
        public var code: Int
        public var message: String
        public var isFatal: Bool
        /// With ``SyncErrorCode/compensatingWrite``: the writes the server refused; the server
        /// then sends each object's state as it keeps it, which reverts the client's change.
        public var compensatingWrites: [CompensatingWrite]?
        /// With ``SyncErrorCode/badQuery``: the version of the subscription set refused (the
        /// server keeps serving the set it had).
        public var subscriptionVersion: Int64?
        public init(code: Int, message: String, isFatal: Bool, compensatingWrites: [CompensatingWrite]? = nil,
                    subscriptionVersion: Int64? = nil) {
            self.code = code
            self.message = message
            self.isFatal = isFatal
            self.compensatingWrites = compensatingWrites
            self.subscriptionVersion = subscriptionVersion
        }
    }

    /// One refused write: the object's class and primary key, and why.
    public struct CompensatingWrite: Codable, Sendable, Equatable {
        public var className: String
        public var primaryKey: JSONValue
        public var reason: String
        public init(className: String, primaryKey: JSONValue, reason: String) {
            self.className = className
            self.primaryKey = primaryKey
            self.reason = reason
        }
    }
}

/// The codes of protocol errors: Realm's sync protocol error numbers.
public enum SyncErrorCode: Int, Sendable {
    /// A malformed frame.
    case badSyntax = 102
    case wrongProtocolVersion = 104
    case otherSessionError = 201
    /// The client synced with a server history that is gone (another server identity: the
    /// database was dropped and recreated, or restored): a client reset.
    case badServerFileIdent = 207
    /// The client file's id is missing or another user's.
    case badClientFileIdent = 208
    /// The client has applied server versions the server does not have (the history was
    /// restored from an older backup): a client reset.
    case badServerVersion = 209
    /// The server no longer keeps the history after the client's version (pruned): a client
    /// reset.
    case clientFileExpired = 222
    /// The token has expired.
    case tokenExpired = 202
    /// The token is missing, malformed, forged or for another app.
    case badAuthentication = 203
    /// The client's model differs from the server's schema (a class or property type).
    case invalidSchemaChange = 225
    /// A subscription names an unknown class or a query the server cannot run.
    case badQuery = 226
    /// What the rules' expansions gave for the user changed (their custom data did): the session
    /// ends and the next one starts with the new role, removing what it may no longer read.
    case serverPermissionsChanged = 228
    /// An uploaded change does not fit the schema (unknown class, wrong type); nothing of it applied.
    case writeNotAllowed = 230
    /// Writes the rules do not allow were undone (Device Sync's compensating write).
    case compensatingWrite = 231
    /// The client's schema version is not the server's.
    case badSchemaVersion = 235

    /// Whether the client must reset its file (Realm's client reset).
    public var requiresClientReset: Bool {
        self == .badServerFileIdent || self == .badServerVersion || self == .clientFileExpired
    }
}

/// A subscription set as it travels: every subscription's class and query text.
public struct SubscriptionSet: Codable, Sendable, Equatable {
    public var version: Int64
    public var subscriptions: [Subscription]
    public init(version: Int64, subscriptions: [Subscription]) {
        self.version = version
        self.subscriptions = subscriptions
    }

    public struct Subscription: Codable, Sendable, Equatable, Hashable {
        public var name: String?
        public var className: String
        /// Realm query language, arguments written as literals.
        public var query: String
        public init(name: String?, className: String, query: String) {
            self.name = name
            self.className = className
            self.query = query
        }
    }
}

/// One object's local change, as uploaded.
public struct SyncObjectChange: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case insert, update, delete }
    public var className: String
    /// The primary key, canonical Extended JSON.
    public var primaryKey: JSONValue
    public var kind: Kind
    /// The hybrid logical clock of the commit (see ``HybridLogicalClock``).
    public var timestamp: String
    public var fields: [FieldChange]
    /// With `.insert`: the properties whose value is the model's default, not set by the app.
    /// A default loses to any value set explicitly, whatever the timestamps (as in Realm).
    public var defaultFields: [String]?
    public init(className: String, primaryKey: JSONValue, kind: Kind, timestamp: String, fields: [FieldChange],
                defaultFields: [String]? = nil) {
        self.className = className
        self.primaryKey = primaryKey
        self.kind = kind
        self.timestamp = timestamp
        self.fields = fields
        self.defaultFields = defaultFields
    }
}

/// How one property changed.
public enum FieldChange: Codable, Sendable, Equatable {
    /// A new value (last writer wins per property). `name` is a property, or a field of an
    /// embedded object (`address.city`), merged per field.
    case set(name: String, value: JSONValue)
    /// A list changed from `base` (as last synced) to `value`: merged as insertions and
    /// removals against the server's current list.
    case list(name: String, base: [JSONValue], value: [JSONValue])
    /// A set's additions and removals.
    case setDiff(name: String, added: [JSONValue], removed: [JSONValue])
    /// Map keys set (value) or removed (nil); last writer wins per key.
    case map(name: String, values: [String: JSONValue?])

    public var name: String {
        switch self {
        case .set(let name, _), .list(let name, _, _), .setDiff(let name, _, _), .map(let name, _): name
        }
    }
}

/// One change from the server's history: the object's whole document, or nil when it is gone
/// (deleted, or no longer in the client's subscriptions).
public struct ServerChange: Codable, Sendable, Equatable {
    public var className: String
    public var primaryKey: JSONValue
    public var document: JSONValue?
    public var serverVersion: Int64
    /// The newest hybrid logical clock timestamp of the object's writes (nil when unknown):
    /// the client's clock observes it, so its next edit of the object is later.
    public var timestamp: String?
    public init(className: String, primaryKey: JSONValue, document: JSONValue?, serverVersion: Int64,
                timestamp: String? = nil) {
        self.className = className
        self.primaryKey = primaryKey
        self.document = document
        self.serverVersion = serverVersion
        self.timestamp = timestamp
    }
}
