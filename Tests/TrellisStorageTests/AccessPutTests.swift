import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A put through a tree's access (`WriteTransaction.put(_:TreeAccess,key:value:mode:)`, session
/// 36) writes what a put by the tree's name writes, and only through an access of the write
/// transaction itself.
@Suite struct AccessPutTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func put(_ write: WriteTransaction, _ access: TreeAccess, _ key: String, _ value: String,
                     mode: PutMode = .upsert) throws -> Bool {
        try bytes(key).withUnsafeBytes { k in try bytes(value).withUnsafeBytes { try write.put(access, key: k, value: $0, mode: mode) } }
    }

    @Test func aPutThroughAnAccessWritesWhatAPutByNameWrites() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write throws in
            try write.createTree("meta")
            try write.createTree("other")
            let access = try write.access("meta")
            _ = try write.access("other")  // the transaction's last access is another tree's
            #expect(try put(write, access, "a", "1"))
            #expect(try put(write, access, "b", "2"))
            #expect(try put(write, access, "a", "3") == false, "a replaced key is not new")
            #expect(throws: StorageError.self) { try put(write, access, "b", "4", mode: .noOverwrite) }
            #expect(try write.get("meta", key: bytes("a")) == bytes("3"))
            #expect(try write.info("meta")?.count == 2)
        }
        try environment.read { read throws in
            #expect(try read.get("meta", key: bytes("a")) == bytes("3"))
            #expect(try read.get("meta", key: bytes("b")) == bytes("2"))
            #expect(try read.get("other", key: bytes("a")) == nil)
        }
    }

    @Test func anAccessOfAnotherTransactionIsMisuse() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        var ended: TreeAccess?
        try environment.write { write throws in
            try write.createTree("meta")
            ended = try write.access("meta")
        }
        let old = try #require(ended)
        let read = try environment.beginRead()
        let readers = try read.access("meta")
        try environment.write { write throws in
            for access in [old, readers] {
                do {
                    _ = try put(write, access, "a", "1")
                    Issue.record("a put through another transaction's access was accepted")
                } catch let error as StorageError {
                    #expect(error.code == .invalidUse)
                }
            }
            #expect(try write.info("meta")?.count == 0)
        }
        read.end()
    }

    @Test func afterADropTheAccessFindsTheTreeOfItsNameAgain() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write throws in
            try write.createTree("meta")
            try write.put("meta", key: bytes("old"), value: bytes("1"))
        }
        try environment.write { write throws in
            let access = try write.access("meta")
            try write.dropTree("meta")
            try write.createTree("meta")
            #expect(try put(write, access, "new", "2"))
        }
        try environment.read { read throws in
            #expect(try read.get("meta", key: bytes("new")) == bytes("2"))
            #expect(try read.get("meta", key: bytes("old")) == nil)
        }
    }
}
