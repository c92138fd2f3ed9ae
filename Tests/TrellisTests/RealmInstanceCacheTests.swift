import Foundation
import Testing
@testable import Trellis

/// `try Realm()` on one thread hands back one instance per file, as Realm does: Realm keeps
/// its instance alive (autoreleased) so that `try! Realm().beginWrite()` then
/// `try! Realm().create(…)` is one transaction (realm-swift's `testBeginWrite` and its docs'
/// pattern); Trellis keeps an instance open while it is in a write (see `OpenWhileWriting`).
@Suite struct RealmInstanceCacheTests {
    let folder = TemporaryFolder()

    @Test func temporaryRealmsOnOneThreadShareOneWriteTransaction() throws {
        let config = folder.configuration([Dog.self])
        try onOtherThread {
            try Realm(configuration: config).beginWrite()
            #expect(try Realm(configuration: config).isInWriteTransaction)
            try Realm(configuration: config).create(Dog.self, value: ["name": "Rex", "age": 3])
            #expect(try Realm(configuration: config).objects(Dog.self).count == 1)
            try Realm(configuration: config).commitWrite()
            #expect(try !Realm(configuration: config).isInWriteTransaction)
            #expect(try Realm(configuration: config).objects(Dog.self).first?.name == "Rex")
        }
        // Committed for real: another thread's instance sees it.
        let count = try onOtherThread { try Realm(configuration: config).objects(Dog.self).count }
        #expect(count == 1)
    }

    @Test func aSecondBeginWriteThroughAnotherTemporaryTrapsAndCancelEndsTheWrite() throws {
        let config = folder.configuration([Dog.self])
        try onOtherThread {
            try Realm(configuration: config).beginWrite()
            #expect(try Realm(configuration: config).isInWriteTransaction)
            try Realm(configuration: config).create(Dog.self, value: ["name": "Gone"])
            try Realm(configuration: config).cancelWrite()
            #expect(try Realm(configuration: config).objects(Dog.self).isEmpty)
            // A write someone else ends: the kept instance lets go once it ends.
            let inside = try Realm(configuration: config).write { () throws -> Bool in
                try Realm(configuration: config).isInWriteTransaction
            }
            #expect(inside)
            #expect(try !Realm(configuration: config).isInWriteTransaction)
        }
    }

    @Test func aWriteLeftOpenIsCancelledWhenItsThreadEnds() throws {
        let config = folder.configuration([Dog.self])
        try onOtherThread {
            try Realm(configuration: config).beginWrite()
            try Realm(configuration: config).create(Dog.self, value: ["name": "Never committed"])
        }
        // Another thread can write (the lock was let go) and sees nothing of the abandoned write.
        let names = try onOtherThread { () -> [String] in
            let realm = try Realm(configuration: config)
            try realm.write { realm.create(Dog.self, value: ["name": "Committed"]) }
            return realm.objects(Dog.self).map(\.name)
        }
        #expect(names == ["Committed"])
    }

    @Test func instancesAreSharedPerThreadNotAcrossThreads() throws {
        let config = folder.configuration([Dog.self])
        try onOtherThread {
            let first = try Realm(configuration: config)
            #expect(try first == Realm(configuration: config))
            let other = try onOtherThread { () -> Bool in
                let here = try Realm(configuration: config)
                return here.isInWriteTransaction
            }
            first.beginWrite()
            #expect(!other)
            let seenElsewhere = try onOtherThread { try Realm(configuration: config).isInWriteTransaction }
            #expect(!seenElsewhere)
            first.cancelWrite()
        }
    }

    @Test func openingAgainWithOtherReadPermissionsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            var config = folder.configuration([Dog.self])
            let realm = try Realm(configuration: config)
            config.readOnly = true
            _ = try Realm(configuration: config)
            withExtendedLifetime(realm) {}
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("already opened with different read permissions"))
    }
}
