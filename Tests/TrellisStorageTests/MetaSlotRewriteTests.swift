import Foundation
import Synchronization
import Testing
@testable import TrellisStorage

/// A read transaction decodes a meta slot from the shared map without the table lock, so a
/// writer of another process can rewrite the slot while it is decoded (docs/STORAGE.md,
/// section 6). The decoded slot must then be one whole commit, or none (a torn slot is retried).
/// Before the fix the checksum was checked on the old bytes and fields were then read from the
/// new ones: KillTests' reader saw "checksum mismatch" on a sound page (a commit's number with
/// the next commit's catalog checksum).
@Suite struct MetaSlotRewriteTests {
    private static func encoded(_ meta: MetaSlot) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Layout.pageSize)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            meta.encode(into: base)
        }
        return Array(bytes[0..<MetaSlot.checkedLength + 8])
    }

    @Test func aSlotRewrittenWhileItIsDecodedGivesOneWholeCommitOrNone() throws {
        // Two commits that differ in every field, as consecutive commits written to one slot do.
        let older = MetaSlot(txnID: 2245, durableTxnID: 2244, pageCount: 500,
                             catalog: PageReference(page: 408, checksum: 0xA0B4_6F9A_475D_6B3D),
                             freeList: PageReference(page: 411, checksum: 0x1111_2222_3333_4444),
                             freeListCount: 40, catalogDepth: 1)
        let newer = MetaSlot(txnID: 2247, durableTxnID: 2246, pageCount: 512,
                             catalog: PageReference(page: 398, checksum: 0xE087_0998_5B68_A58F),
                             freeList: PageReference(page: 400, checksum: 0x5555_6666_7777_8888),
                             freeListCount: 46, catalogDepth: 2)
        let encodings = [Self.encoded(older), Self.encoded(newer)]
        let slot = UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 64)
        encodings[0].withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }

        // A thread rewrites the slot with one commit and the other, byte by byte in file order
        // (as a `pwrite` into the page cache does), while this thread decodes it.
        let stop = Atomic(false)
        let rewrites = Atomic(0)
        let address = Int(bitPattern: slot)
        let writerEnded = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { writerEnded.signal() }
            guard let slot = UnsafeMutableRawPointer(bitPattern: address) else { return }
            var which = 1
            while !stop.load(ordering: .relaxed) {
                let bytes = encodings[which]
                for offset in 0..<bytes.count {
                    (slot + offset).assumingMemoryBound(to: Atomic<UInt8>.self).pointee.store(bytes[offset], ordering: .relaxed)
                }
                which = 1 - which
                rewrites.add(1, ordering: .relaxed)
            }
        }
        writer.start()
        defer {
            // The thread writes into the slot until it sees `stop`: free the slot after it ended.
            stop.store(true, ordering: .relaxed)
            writerEnded.wait()
            slot.deallocate()
        }
        let decodes = environmentInteger("TRELLIS_STORAGE_SLOT_DECODES", default: 500_000)
        var whole = 0, torn = 0
        for attempt in 0..<decodes {
            guard let meta = MetaSlot.decode(UnsafeRawPointer(slot)) else {
                torn += 1
                continue
            }
            guard meta == older || meta == newer else {
                Issue.record("decode \(attempt) gave a slot of neither commit: \(meta)")
                return
            }
            whole += 1
        }
        print("MetaSlotRewriteTests: \(decodes) decodes during \(rewrites.load(ordering: .relaxed)) rewrites: "
            + "\(whole) whole commits, \(torn) torn slots refused")
        #expect(whole > 0)
    }
}
