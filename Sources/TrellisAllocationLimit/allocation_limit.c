// Stops the process when one allocation asks for more bytes than TRELLIS_ALLOCATION_LIMIT.
//
// Loaded with LD_PRELOAD into the helper process that reads a damaged file
// (Tests/TrellisTests/DamagedFileFlipTests.swift): a length or count read from a damaged page
// must never size an allocation larger than the file. glibc lets a program replace malloc; each
// function here checks the size and hands the call to glibc's own allocator (__libc_*), so free,
// malloc_usable_size and the rest stay glibc's. An allocation over the limit prints one line and
// exits with status 86 (not a signal, so the test tells it from a crash).
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static size_t limit_bytes = 0;   // 0: not read yet
static int limit_read = 0;

static size_t limit(void) {
    if (!limit_read) {
        limit_read = 1;
        const char *text = getenv("TRELLIS_ALLOCATION_LIMIT");
        size_t value = 0;
        if (text) {
            for (const char *c = text; *c >= '0' && *c <= '9'; c++) value = value * 10 + (size_t)(*c - '0');
        }
        limit_bytes = value ? value : SIZE_MAX;
    }
    return limit_bytes;
}

static void check(size_t size) {
    if (size <= limit()) return;
    char line[96] = "allocation over the limit: ";
    char digits[24];
    int n = 0;
    size_t v = size;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 23);
    size_t at = strlen(line);
    while (n > 0 && at < sizeof line - 2) line[at++] = digits[--n];
    line[at++] = '\n';
    (void)!write(2, line, at);
    // TRELLIS_ALLOCATION_TRAP set: abort instead, for a backtrace of the allocation.
    if (getenv("TRELLIS_ALLOCATION_TRAP")) abort();
    _exit(86);
}

void *malloc(size_t size) { check(size); return __libc_malloc(size); }

void *calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) { errno = ENOMEM; return NULL; }
    check(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) { check(size); return __libc_realloc(pointer, size); }

void *memalign(size_t alignment, size_t size) { check(size); return __libc_memalign(alignment, size); }

void *aligned_alloc(size_t alignment, size_t size) { check(size); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    check(size);
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *result = pointer;
    return 0;
}
