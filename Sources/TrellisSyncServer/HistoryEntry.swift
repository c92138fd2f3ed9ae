import TrellisSyncProtocol

/// One history entry as the server fans it out: the change, the object's document just before
/// it, and who wrote it, so each session can tell whether its device may hold the object
/// without asking PostgreSQL (docs/SYNC.md, "Change notification").
struct HistoryEntry: Sendable {
    var change: ServerChange
    /// The object's document before this change (nil: it did not exist, or was deleted).
    var previous: JSONValue?
    /// False when the history has no earlier entry of the object but may have been pruned
    /// (`history_floor` > 0): then any device subscribed to the class may hold the object.
    var previousKnown: Bool
    /// The client file whose upload made the change (nil: an SQL write).
    var clientId: String?

    var version: Int64 { change.serverVersion }
}
