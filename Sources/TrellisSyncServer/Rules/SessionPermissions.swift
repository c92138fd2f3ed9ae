import Foundation
import TrellisSyncProtocol

/// What one sync session's user may read and write: per collection, the first role whose
/// `apply_when` holds for the user when the session starts (as Device Sync assigns roles),
/// or none (nothing of that collection is readable or writable).
struct SessionPermissions: Sendable {
    let user: RuleUser
    private let roles: [String: SyncRole]
    /// No rules (`--allow-all`): everything is readable and writable.
    let allowsEverything: Bool
    /// What the rules' `%%user…` expansions give for this user, by expansion. App Services
    /// expands them once when a session starts; when they differ at the next session, the
    /// role may differ too (Device Sync then resets the client).
    let expandedUserValues: [String: JSONValue]

    init(rules: SyncRules, user: RuleUser, collections: some Sequence<String>) {
        var user = user
        user.app = rules.app
        self.user = user
        var roles = [String: SyncRole]()
        for collection in collections {
            roles[collection] = rules.roles(of: collection).first { $0.applyWhen.matches(nil, user: user) }
        }
        self.roles = roles
        allowsEverything = rules.allowsAll
        var expanded = [String: JSONValue]()
        for expansion in rules.userExpansions { expanded[expansion] = user.expand(expansion) ?? .null }
        expandedUserValues = expanded
    }

    /// The role assigned for a collection (nil: no access).
    func role(of collection: String) -> SyncRole? { roles[collection] }

    /// Whether the user sees whole documents of the collection (no field is hidden), so SQL may
    /// filter its rows on any field.
    func readsWholeDocuments(_ collection: String) -> Bool {
        if allowsEverything { return true }
        guard let role = roles[collection] else { return true }  // nothing readable: nothing to hide
        return role.read || role.write
    }

    /// The document as this user may see it (fields it may not read removed), or nil when it
    /// may not read the document at all.
    func readable(_ collection: String, _ document: JSONValue) -> JSONValue? {
        if allowsEverything { return document }
        guard let role = roles[collection], role.readsAnything, case .object(let object) = document else { return nil }
        guard role.readFilter.matches(object, user: user) || role.writeFilter.matches(object, user: user) else {
            return nil
        }
        if role.read || role.write { return document }
        return .object(object.filter { role.canRead(field: $0.key) })
    }

    /// An update without its changes to fields the user may not read. The device never had
    /// them (downloads leave them out), so what it sends for them is its model's default
    /// against a document that lacked the field, not an edit; without this, editing a visible
    /// field of such an object would be refused. Inserts and deletes are kept whole.
    func withoutHiddenFields(_ change: SyncObjectChange, stored: Bool) -> SyncObjectChange {
        guard !allowsEverything, stored, change.kind == .update, let role = roles[change.className],
              !role.read, !role.write else { return change }
        var visible = change
        visible.fields = change.fields.filter { role.canRead(field: $0.name) }
        return visible
    }

    /// Why this user may not make `change` to an object stored as `before` (nil: absent),
    /// which would become `after` (nil: deleted); nil when allowed.
    func refusal(of change: SyncObjectChange, before: [String: JSONValue]?, after: [String: JSONValue]?) -> String? {
        if allowsEverything { return nil }
        let collection = change.className
        guard let role = roles[collection] else {
            return "no role of the rules applies to user '\(user.id)' for '\(collection)', so it may not write there"
        }
        switch (before, after) {
        case (nil, nil):
            return nil  // nothing changes (a delete of a deleted object)
        case (nil, let after?):
            guard role.insert else { return "role '\(role.name)' may not insert into '\(collection)'" }
            guard role.writeFilter.matches(after, user: user) else {
                return "the new object does not match role '\(role.name)''s document_filters.write"
            }
            return nil
        case (let before?, nil):
            guard role.delete else { return "role '\(role.name)' may not delete from '\(collection)'" }
            guard role.writeFilter.matches(before, user: user) else {
                return "the object does not match role '\(role.name)''s document_filters.write"
            }
            return nil
        case (let before?, let after?):
            guard role.writeFilter.matches(before, user: user) else {
                return "the object does not match role '\(role.name)''s document_filters.write"
            }
            guard role.writeFilter.matches(after, user: user) else {
                return "the change would take the object out of role '\(role.name)''s document_filters.write"
            }
            // A field of an embedded object (`address.city`) is written through its property.
            let names = Set(change.fields.map { $0.name.split(separator: ".").first.map(String.init) ?? $0.name })
            let refused = names.filter { !role.canWrite(field: $0) && before[$0] != after[$0] }
            if !refused.isEmpty {
                return "role '\(role.name)' may not write the field"
                    + (refused.count == 1 ? " " : "s ") + refused.sorted().map { "'\($0)'" }.joined(separator: ", ")
            }
            return nil
        }
    }
}

/// What a user's rule expansions are read from when a session starts: their custom data
/// (`%%user.custom_data`) and user data (`%%user.data`).
struct RuleInputs: Sendable, Equatable {
    var customData: [String: JSONValue]
    var data: [String: JSONValue]

    init(customData: [String: JSONValue], data: [String: JSONValue]) {
        self.customData = customData
        self.data = data
    }

    init?(json: JSONValue) {
        guard let object = json.objectValue else { return nil }
        customData = object["custom_data"]?.objectValue ?? [:]
        data = object["data"]?.objectValue ?? [:]
    }

    var json: JSONValue { .object(["custom_data": .object(customData), "data": .object(data)]) }

    /// The user `id` with these inputs.
    func user(_ id: String) -> RuleUser {
        var user = RuleUser(id: id)
        user.customData = customData
        user.data = data
        return user
    }
}
