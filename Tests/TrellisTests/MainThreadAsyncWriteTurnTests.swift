import Foundation
@testable import Trellis
import XCTest

/// Realm's RealmTests.testAsyncTransactionCancel, in XCTest as Realm's tests run (on the main
/// thread, waiting by running the main run loop): a main-thread Realm's asynchronous writes
/// asked for inside a block of the main queue run in a nested wait in that block. Realm runs
/// them from a run-loop source; the main queue runs none of its blocks while one of them waits.
final class MainThreadAsyncWriteTurnTests: XCTestCase {
    func testAsyncWritesAskedForInAMainQueueBlockRunInANestedWaitInThatBlock() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("main-turn-\(UUID()).realm")
        defer { try? FileManager.default.removeItem(at: url) }
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self])
        let blockDone = expectation(description: "the main-queue block ended")
        let ran = XCTestExpectation(description: "three writes ran")
        ran.expectedFulfillmentCount = 3
        let cancelled = XCTestExpectation(description: "the cancelled write did not run")
        cancelled.isInverted = true
        nonisolated(unsafe) let test = self
                DispatchQueue.main.async {
            guard let realm = try? Realm(configuration: configuration) else { return XCTFail("could not open") }
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "not committed"]))
                ran.fulfill()
            }
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "first"]))
                realm.commitAsyncWrite()
                ran.fulfill()
            }
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "second"]))
                ran.fulfill()
                realm.commitAsyncWrite()
            }
            let cancelledId = realm.beginAsyncWrite { cancelled.fulfill() }
            do { try realm.cancelAsyncWrite(cancelledId) } catch { XCTFail("\(error)") }
            test.wait(for: [ran, cancelled], timeout: 3)
            XCTAssertFalse(realm.isInWriteTransaction)
            blockDone.fulfill()
        }
        wait(for: [blockDone], timeout: 60)
        let realm = try Realm(configuration: configuration)
        XCTAssertEqual(realm.objects(Dog.self).map(\.name).sorted(), ["first", "second"])
    }
}
