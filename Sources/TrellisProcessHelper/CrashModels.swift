import Trellis

// The relationship model the crash test writes: people with a to-one dog, a list of dogs, an
// embedded address; every object carries the id of the transaction ("group") that made it.

/// One per file: the id of the last committed transaction.
final class CrashLedger: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var lastTransaction = 0
}

/// One per live group: how many people and dogs the group has now.
final class CrashMarker: Object {
    @Persisted(primaryKey: true) var group = 0
    @Persisted var people = 0
    @Persisted var dogs = 0
}

/// A record that a transaction deleted a whole group (never deleted itself).
final class CrashDeletion: Object {
    @Persisted(primaryKey: true) var group = 0
    @Persisted var byTransaction = 0
}

/// A record that a transaction changed or deleted an earlier group (never deleted itself): what an
/// incremental check after a kill must look at besides the groups newer than the last check.
final class CrashTouch: Object {
    @Persisted(primaryKey: true) var transaction = 0
    @Persisted var group = 0
}

final class CrashPerson: Object {
    @Persisted(indexed: true) var group = 0
    @Persisted var name = ""
    @Persisted var dog: CrashDog?
    @Persisted var dogs: List<CrashDog>
    @Persisted var address: CrashAddress?
}

final class CrashDog: Object {
    @Persisted(indexed: true) var group = 0
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<CrashPerson>
}

final class CrashAddress: EmbeddedObject {
    @Persisted var street = ""
}

let crashModelTypes: [ObjectBase.Type] = [
    CrashLedger.self, CrashMarker.self, CrashDeletion.self, CrashTouch.self, CrashPerson.self, CrashDog.self,
    CrashAddress.self,
]
