#!/usr/bin/env python3
"""Page census of a plain TrellisStorage file: every page of the newest commit accounted for, per
tree (Trellis's `t.<Class>`, `c.<Class>`, `pk.<Class>`, `backlinks`, ...), as leaf, branch,
overflow or free, with the fill of each (bytes used / page size) and bytes per entry.

    python3 Scripts/page-census.py FILE            # the table
    python3 Scripts/page-census.py FILE --levers   # and what other page sizes / cell headers would give

An independent reader of docs/STORAGE.md section 2 (no Trellis code): leaves of kind 2 (8-byte
cells, format versions 3-4) and kind 6 (4-byte cells, versions 5-6), branches (kind 1), overflow
runs (kind 3), the free tree and the meta slot's spares. Encrypted files are not read. Issue 37's
W1 file-size analysis (docs/BENCHMARKS.md, "Where W1's file goes") was made with it:

    Benchmarks/.build/x86_64-unknown-linux-gnu/release/TrellisBench --child w1-memory-trellis /tmp/w1.realm 100000
    python3 Scripts/page-census.py /tmp/w1.realm
"""
import collections
import struct
import sys

PAGE = 4096
HEADER = 32


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    with open(path, 'rb') as handle:
        data = handle.read()

    def page(number):
        if (number + 1) * PAGE > len(data):
            sys.exit('page %d lies past the end of the file (%d bytes)' % (number, len(data)))
        return data[number * PAGE:(number + 1) * PAGE]

    head = page(0)
    if head[:8] != b'TRLSTORE':
        sys.exit('%s is not a TrellisStorage file' % path)
    version, page_size = struct.unpack_from('<II', head, 8)
    if page_size != PAGE or version in (2, 4, 6):
        sys.exit('version %d, page size %d: only plain files of 4 KiB pages are read' % (version, page_size))
    slots = []
    for number in (1, 2):
        slot = page(number)
        if slot[:8] != b'TRLSMETA':
            continue
        fields = struct.unpack_from('<11Q', slot, 8)
        txn, _, page_count, catalog_root, _, free_root, _, _, _, _, spare_count = fields
        spares = struct.unpack_from('<%dQ' % min(spare_count, 256), slot, 112)
        slots.append(dict(txn=txn, page_count=page_count, catalog=catalog_root, free=free_root, spares=spares))
    if not slots:
        sys.exit('no meta slot holds a commit')
    meta = max(slots, key=lambda slot: slot['txn'])

    owner = {}
    stats = collections.defaultdict(collections.Counter)
    overflow_lengths = []

    def cells(content, kind):
        """(key, inline value or None, overflow (first page, length) or None, cell bytes) per cell."""
        count = struct.unpack_from('<H', content, 2)[0]
        for offset in struct.unpack_from('<%dH' % count, content, HEADER):
            if kind == 2:
                key_length, value_kind, _, length = struct.unpack_from('<HBBI', content, offset)
                start = offset + 8 + key_length
                key = content[offset + 8:start]
                if value_kind == 0:
                    yield key, content[start:start + length], None, 8 + key_length + length
                else:
                    yield key, None, (struct.unpack_from('<Q', content, start)[0], length), 8 + key_length + 16
            else:
                key_length, length = struct.unpack_from('<HH', content, offset)
                start = offset + 4 + key_length
                key = content[offset + 4:start]
                if length != 0xFFFF:
                    yield key, content[start:start + length], None, 4 + key_length + length
                else:
                    first, _, full_length = struct.unpack_from('<QQI', content, start)
                    yield key, None, (first, full_length), 4 + key_length + 20

    def walk(root, tree, visit=None):
        stack = [root]
        while stack:
            number = stack.pop()
            content = page(number)
            kind, _, count = struct.unpack_from('<BBH', content, 0)
            if struct.unpack_from('<Q', content, 8)[0] != number:
                sys.exit('page %d of %s names another page' % (number, tree))
            used = HEADER + 2 * count
            if kind == 1:
                for offset in struct.unpack_from('<%dH' % count, content, HEADER):
                    used += 24 + struct.unpack_from('<H', content, offset)[0]
                    stack.append(struct.unpack_from('<Q', content, offset + 8)[0])
                owner[number] = tree
                stats[tree]['branch'] += 1
                stats[tree]['branch used'] += used
            elif kind in (2, 6):
                for key, value, overflow, size in cells(content, kind):
                    used += size
                    stats[tree]['entries'] += 1
                    stats[tree]['key bytes'] += len(key)
                    if overflow:
                        first, length = overflow
                        run = struct.unpack_from('<I', page(first), 4)[0]
                        for index in range(run):
                            owner[first + index] = tree
                        stats[tree]['overflow'] += run
                        stats[tree]['overflow used'] += HEADER + length
                        stats[tree]['overflow values'] += 1
                        stats[tree]['value bytes'] += length
                        overflow_lengths.append(length)
                        value = data[first * PAGE + HEADER:first * PAGE + HEADER + length]
                    else:
                        stats[tree]['value bytes'] += len(value)
                    if visit:
                        visit(key, value)
                owner[number] = tree
                stats[tree]['leaf'] += 1
                stats[tree]['leaf used'] += used
            else:
                sys.exit('page %d of %s has kind %d' % (number, tree, kind))

    catalog = []
    if meta['catalog']:
        walk(meta['catalog'], '(catalog)', lambda key, value: catalog.append((key.decode(), struct.unpack_from('<Q', value, 0)[0])))
    for name, root in catalog:
        if root:
            walk(root, name)
    free = set(meta['spares'])
    if meta['free']:
        def record(key, value):
            free.update(struct.unpack_from('<%dQ' % ((len(value) - 8) // 8), value, 8))
        walk(meta['free'], '(free tree)', record)
    pages_in_file = len(data) // PAGE
    unaccounted = [n for n in range(3, meta['page_count']) if n not in owner and n not in free]

    print('%s: %d bytes, %d pages; format version %d, commit %d, high-water mark %d pages'
          % (path, len(data), pages_in_file, version, meta['txn'], meta['page_count']))
    print('header and meta slots 3, tree pages %d, free pages %d, past the high-water mark %d, unaccounted %d'
          % (len(owner), len(free), pages_in_file - meta['page_count'], len(unaccounted)))
    print()
    print('| tree | pages | MiB | leaf | branch | overflow | leaf fill | overflow fill | entries | bytes/entry | key B | value B |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    rows = sorted(stats.items(), key=lambda item: -(item[1]['leaf'] + item[1]['branch'] + item[1]['overflow']))
    for tree, st in rows:
        pages = st['leaf'] + st['branch'] + st['overflow']
        entries = st['entries'] or 1
        print('| %s | %d | %.2f | %d | %d | %d | %.1f%% | %s | %d | %.1f | %.1f | %.1f |' % (
            tree, pages, pages * PAGE / 1048576, st['leaf'], st['branch'], st['overflow'],
            100.0 * st['leaf used'] / (st['leaf'] * PAGE) if st['leaf'] else 0,
            '%.1f%%' % (100.0 * st['overflow used'] / (st['overflow'] * PAGE)) if st['overflow'] else '-',
            st['entries'], pages * PAGE / entries, st['key bytes'] / entries, st['value bytes'] / entries))

    if '--levers' not in sys.argv:
        return
    # What the same entries would take with another leaf cell header or page size: leaves keep
    # their tree's fill, overflow runs take ceil((32 + length) / page size) pages.
    def leaf_pages(cell_delta, size=PAGE):
        total = 0
        for tree, st in stats.items():
            if not st['leaf']:
                continue
            fill = st['leaf used'] / (st['leaf'] * PAGE)
            used = st['leaf used'] + cell_delta * (st['entries'] - st['overflow values'])
            total += max(1, -(-used // int(size * fill))) * size // PAGE + st['branch']
        return total
    overflow_now = sum(st['overflow'] for st in stats.values())
    print()
    print('leaf and branch pages %d, overflow pages %d (%d if packed with no slack)'
          % (leaf_pages(0), overflow_now, sum(HEADER + length for length in overflow_lengths) // PAGE))
    for delta in (-4, -5, -6, 4):
        print('leaf cells %+d bytes each: leaf and branch pages %d (%+d)' % (delta, leaf_pages(delta), leaf_pages(delta) - leaf_pages(0)))
    for size in (4096, 8192, 16384, 32768, 65536):
        runs = sum(-(-(HEADER + length) // size) * size // PAGE for length in overflow_lengths)
        total = leaf_pages(0, size) + runs + 3 * size // PAGE
        print('page size %5d: %d + %d overflow = %d pages of 4 KiB (%.1f MiB)' % (size, leaf_pages(0, size), runs, total, total * PAGE / 1048576))


if __name__ == '__main__':
    main()
