import Foundation

/// Decrypted pages of an encrypted file, shared by the process's transactions
/// (docs/STORAGE.md, section 12).
///
/// Entries are keyed by their first page and the checksum of the reference that led there (a
/// reused page number has a new checksum, so a stale entry is never served), hold one page or
/// an overflow run, and are evicted by CLOCK once more than `capacity` pages are cached: they sit
/// in fixed slots the hand sweeps in order (a removed entry leaves its slot empty for the next
/// insert, nothing moves), and an entry is inserted referenced, so it stays at least one full
/// turn of the hand.
///
/// Bytes are lent to transactions until they end, so an evicted entry's memory is retired, not
/// freed: every transaction takes an epoch when it begins (`beginUse`), and memory retired at
/// epoch `R` is freed when no live transaction has an epoch `<= R` (checked as they end).
final class DecryptedPageCache: @unchecked Sendable {
    // @unchecked Sendable: every property is guarded by `lock`.
    private struct Entry {
        let page: UInt64
        let checksum: UInt64
        let pages: Int
        let bytes: UnsafeMutableRawPointer
        var referenced: Bool
    }

    private struct Retired {
        let bytes: UnsafeMutableRawPointer
        let epoch: UInt64
        let pages: Int
    }

    /// The most pages kept in the cache (retired pages still lent come on top).
    let capacity: Int
    private let lock = NSLock()
    /// Entries by slot (nil: an empty slot, listed in `freeSlots`); `positions` maps a first
    /// page to its slot.
    private var slots: [Entry?] = []
    private var freeSlots: [Int] = []
    private var positions: [UInt64: Int] = [:]
    private var hand = 0
    private var cachedPages = 0
    /// Lookups, and those that found nothing (the page was then decrypted), since the cache began.
    private var lookups = 0
    private var misses = 0
    private var epoch: UInt64 = 0
    private var liveEpochs: [UInt64: Int] = [:]
    private var retired: [Retired] = []
    private var retiredPages = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    deinit {
        for case let entry? in slots { entry.bytes.deallocate() }
        for old in retired { old.bytes.deallocate() }
    }

    /// Figures for tests and reports.
    struct Status: Equatable {
        /// Pages in the cache.
        var cachedPages: Int
        /// Pages evicted but still possibly lent to a live transaction.
        var retiredPages: Int
        /// Live transactions (and other walks) holding an epoch.
        var liveUses: Int
        /// Lookups since the cache began, and those that missed (each miss is a decryption).
        var lookups: Int
        var misses: Int
    }

    var status: Status {
        lock.lock()
        defer { lock.unlock() }
        return Status(cachedPages: cachedPages, retiredPages: retiredPages, liveUses: liveEpochs.values.reduce(0, +),
                      lookups: lookups, misses: misses)
    }

    // MARK: - Uses (transactions)

    /// Registers a transaction (or another walk) that may hold lent bytes until `endUse`.
    func beginUse() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        epoch += 1
        liveEpochs[epoch, default: 0] += 1
        return epoch
    }

    /// Ends a use begun with `beginUse`; frees the retired memory no live use can hold.
    func endUse(_ used: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        if let count = liveEpochs[used] {
            if count <= 1 { liveEpochs[used] = nil } else { liveEpochs[used] = count - 1 }
        }
        guard !retired.isEmpty else { return }
        let oldestLive = liveEpochs.keys.min() ?? UInt64.max
        retired.removeAll { old in
            guard old.epoch < oldestLive else { return false }
            old.bytes.deallocate()
            retiredPages -= old.pages
            return true
        }
    }

    // MARK: - Pages

    /// The cached plaintext of `pages` pages from `page`, decrypted under `checksum`, if cached.
    func lookup(page: UInt64, checksum: UInt64, pages: Int) -> UnsafeRawPointer? {
        lock.lock()
        defer { lock.unlock() }
        lookups &+= 1
        guard let position = positions[page], let entry = slots[position], entry.checksum == checksum,
              entry.pages == pages
        else {
            misses &+= 1
            return nil
        }
        slots[position]?.referenced = true
        return UnsafeRawPointer(entry.bytes)
    }

    /// Adds decrypted bytes (allocated with `UnsafeMutableRawPointer.allocate`, now owned by the
    /// cache) and returns the cached plaintext to use: another thread's, when it added the same
    /// page first.
    func insert(page: UInt64, checksum: UInt64, pages: Int, bytes: UnsafeMutableRawPointer) -> UnsafeRawPointer {
        lock.lock()
        defer { lock.unlock() }
        if let position = positions[page], let existing = slots[position] {
            if existing.checksum == checksum, existing.pages == pages {
                bytes.deallocate()
                slots[position]?.referenced = true
                return UnsafeRawPointer(existing.bytes)
            }
            remove(at: position)
        }
        while cachedPages + pages > capacity, !positions.isEmpty {
            evictOne()
        }
        let entry = Entry(page: page, checksum: checksum, pages: pages, bytes: bytes, referenced: true)
        let position: Int
        if let free = freeSlots.popLast() {
            position = free
            slots[position] = entry
        } else {
            position = slots.count
            slots.append(entry)
        }
        positions[page] = position
        cachedPages += pages
        return UnsafeRawPointer(bytes)
    }

    /// Drops every entry (recovery replaced the commit; no transaction is running).
    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        for position in slots.indices where slots[position] != nil { remove(at: position) }
    }

    /// CLOCK: the first entry from the hand not referenced since the hand last passed it (the
    /// hand clears the mark of each referenced entry it passes). At least one entry is cached.
    private func evictOne() {
        while true {
            if hand >= slots.count { hand = 0 }
            guard let entry = slots[hand] else {
                hand += 1
                continue
            }
            if entry.referenced {
                slots[hand]?.referenced = false
                hand += 1
            } else {
                remove(at: hand)
                hand += 1
                return
            }
        }
    }

    /// Removes an entry, leaving its slot empty and retiring its memory at the current epoch.
    private func remove(at position: Int) {
        guard let entry = slots[position] else { return }
        positions[entry.page] = nil
        slots[position] = nil
        freeSlots.append(position)
        cachedPages -= entry.pages
        retired.append(Retired(bytes: entry.bytes, epoch: epoch, pages: entry.pages))
        retiredPages += entry.pages
    }
}
