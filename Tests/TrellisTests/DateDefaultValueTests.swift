import Foundation
import Testing
import Trellis

final class DatedNote: Object, Codable {
    @Persisted var text = ""
    @Persisted var date: Date
    @Persisted var optionalDate: Date?
}

struct DateDefaultWrapper: CustomPersistable {
    typealias PersistedType = Date
    init(persistedValue: Date) { value = persistedValue }
    var persistableValue: Date { value }
    let value: Date
}

final class WrappedDateNote: Object {
    @Persisted var date: DateDefaultWrapper
}

/// Realm's default for a non-optional `Date` property declared without a value is `Date()`, the
/// time the default is made (RealmSwift's `Date: _DefaultConstructible`; CustomObjectCreationTests'
/// `verifyDefault` compares it with `Date()` to within a second), not 1970.
@Suite struct DateDefaultValueTests {
    @Test func anUnmanagedObjectsDatePropertyDefaultsToNow() {
        let before = Date()
        let note = DatedNote()
        #expect(note.date >= before.addingTimeInterval(-1) && note.date <= Date().addingTimeInterval(1))
        #expect(note.optionalDate == nil)
        #expect(abs(WrappedDateNote().date.value.timeIntervalSinceNow) < 1)
    }

    @Test func createWithoutTheDateStoresNow() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "date-default-\(UUID().uuidString)",
                                                   objectTypes: [DatedNote.self]))
        let note = try realm.write { realm.create(DatedNote.self, value: ["text": "a"]) }
        #expect(abs(note.date.timeIntervalSinceNow) < 5)
        let added = DatedNote()
        try realm.write { realm.add(added) }
        #expect(abs(added.date.timeIntervalSinceNow) < 5)
    }

    @Test func decodingWithoutTheDateGivesNow() throws {
        let note = try JSONDecoder().decode(DatedNote.self, from: Data(#"{"text": "a"}"#.utf8))
        #expect(abs(note.date.timeIntervalSinceNow) < 5)
    }
}
