import Trellis

/// A synced task with every collection kind, for the conflict rules of the sync tests
/// (Tests/TrellisSyncTests) and the client helper that edits one under another clock
/// (TrellisSyncClientHelper, ClockSkewProcessTests): both open the same schema, so it is
/// declared once, here. Public for those two modules only (this target is in no product).
public final class SyncTask: Object {
    @Persisted(primaryKey: true) public var _id = ObjectId.generate()
    @Persisted public var owner = ""
    @Persisted public var title = ""
    @Persisted public var priority = 0
    @Persisted public var steps: List<String>
    @Persisted public var tags: MutableSet<String>
    @Persisted public var scores: Map<String, Int>
}
