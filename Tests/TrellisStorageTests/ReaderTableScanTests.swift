import Foundation
import Testing
@testable import TrellisStorage

/// A writer's scan of the reader table (docs/STORAGE.md, section 6) looks only at the slots that
/// may have an owner (`slotsInUse`), not at the whole table (4,096 slots for Trellis: ~100,000
/// instructions per commit before).
@Suite struct ReaderTableScanTests {
    @Test func theScanSeesAReaderInTheLastClaimedSlotAndStopsThere() throws {
        let table = ReaderTable(inMemory: 4096)
        #expect(table.slotsInUse == 0)
        var slots: [Int] = []
        for _ in 0..<10 { slots.append(try table.takeSlot()) }
        #expect(slots == Array(0..<10))
        #expect(table.slotsInUse == 10)
        #expect(try table.withLock { table.oldestReader() } == nil)
        // A reader in the last slot claimed is seen, whatever the other slots hold.
        try table.withLock { table.pin(slots[9], to: 7) }
        #expect(try table.withLock { table.oldestReader() } == 7)
        try table.withLock { table.pin(slots[3], to: 9) }
        #expect(try table.withLock { table.oldestReader() } == 7)
        table.release(slots[9])
        #expect(try table.withLock { table.oldestReader() } == 9)
        table.release(slots[3])
        #expect(try table.withLock { table.oldestReader() } == nil)
        // This process's slots stay claimed (its pool keeps them): the bound stays.
        #expect(table.slotsInUse == 10)
    }

    @Test func aClosedTablesFreedSlotsAtTheEndLowerTheBound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data-lock"
        // Two tables on one lock file: the first claims 6 slots, the second 2 after them.
        let first = try ReaderTable(lockFile: path, slots: 64)
        let second = try ReaderTable(lockFile: path, slots: 64)
        let firstSlots = try (0..<6).map { _ in try first.takeSlot() }
        for slot in firstSlots { first.release(slot) }
        let secondSlots = try (0..<2).map { _ in try second.takeSlot() }
        #expect(secondSlots == [6, 7])
        #expect(second.slotsInUse == 8)
        try second.withLock { second.pin(secondSlots[1], to: 12) }
        #expect(try first.withLock { first.oldestReader() } == 12)
        // When the second closes, its slots are freed and the next scan stops after the first's.
        second.release(secondSlots[0])
        second.release(secondSlots[1])
        second.close()
        #expect(try first.withLock { first.oldestReader() } == nil)
        #expect(first.slotsInUse == 6)
        first.close()
    }
}
