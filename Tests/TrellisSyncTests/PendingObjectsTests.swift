import Testing
import TrellisTestSupport
@testable import TrellisSync

/// The objects with changes in the outbox, which every download frame consults and every
/// acknowledgement counts (``PendingObjects``), followed from the entries queued and dropped
/// instead of read whole each time: a large upload's acknowledgements and echo frames each read
/// the whole outbox before (session 28).
struct PendingObjectsTests {
    /// An outbox as the sync store holds it: numbered entries, in order.
    struct Outbox {
        var entries: [(sequence: UInt64, object: String)] = []
        var next: UInt64 = 1
        /// How many entries the index read.
        var reads = 0

        mutating func queue(_ object: String) {
            entries.append((next, object))
            next += 1
        }

        func read(from start: UInt64, _ body: (UInt64, String) -> Bool) -> Int {
            var count = 0
            for entry in entries where entry.sequence >= start {
                count += 1
                if !body(entry.sequence, entry.object) { break }
            }
            return count
        }

        mutating func update(_ index: inout PendingObjects) {
            var reads = 0
            index.update(oldest: entries.first?.sequence) { start, body in reads += read(from: start, body) }
            self.reads = reads
        }
    }

    static let objects = (0..<30).map { "SyncTask\u{0}\($0)" }

    /// Random commits, acknowledgements and client resets (the outbox emptied, with or without
    /// recovered changes queued in the same transaction), with fixed seeds: after each, the index
    /// holds what a full read finds, and reads only the entries queued since it last looked.
    @Test(arguments: [UInt64(7), 39, 2026])
    func theIndexHoldsWhatTheOutboxHoldsAndReadsOnlyNewEntries(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var outbox = Outbox()
        var index = PendingObjects()
        for step in 0..<2_000 {
            var queued = 0
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                switch Int.random(in: 0..<20, using: &random) {
                case 0..<10:
                    for _ in 0..<Int.random(in: 1...40, using: &random) {
                        outbox.queue(Self.objects.randomElement(using: &random) ?? "")
                        queued += 1
                    }
                case 10..<17:
                    outbox.entries.removeFirst(Int.random(in: 0...outbox.entries.count, using: &random))
                case 17, 18:
                    outbox.entries.removeAll()
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        outbox.queue(Self.objects.randomElement(using: &random) ?? "")
                        queued += 1
                    }
                default:
                    outbox.entries.removeAll()
                }
            }
            outbox.update(&index)
            let pending = Set(outbox.entries.map(\.object))
            for object in Self.objects where index.contains(object) != pending.contains(object) {
                Issue.record("seed \(seed), step \(step): \(object) pending \(pending.contains(object)), index says otherwise")
            }
            #expect(index.count == outbox.entries.count, "seed \(seed), step \(step)")
            #expect(index.newest == (outbox.entries.last?.sequence ?? 0), "seed \(seed), step \(step)")
            #expect(outbox.reads == min(queued, outbox.entries.count),
                    "seed \(seed), step \(step): read \(outbox.reads) entries, \(queued) were queued")
        }
    }

    /// A frame during a long upload reads nothing of the outbox but its oldest entry when
    /// nothing was queued or acknowledged since the last frame.
    @Test func aFrameReadsNoEntryWhenTheOutboxDidNotChange() {
        var outbox = Outbox()
        var index = PendingObjects()
        for number in 0..<10_000 { outbox.queue("SyncTask\u{0}\(number)") }
        outbox.update(&index)
        #expect(outbox.reads == 10_000)
        outbox.entries.removeFirst(500)
        outbox.update(&index)
        #expect(outbox.reads == 0)
        #expect(index.count == 9_500)
        #expect(!index.contains("SyncTask\u{0}499") && index.contains("SyncTask\u{0}500"))
    }
}
