#ifndef TRELLIS_CLMDB_SHIM_H
#define TRELLIS_CLMDB_SHIM_H
#include <lmdb.h>

#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
/* Allocates blocks for [offset, offset + length) without changing the file's size
   (fallocate with FALLOC_FL_KEEP_SIZE; glibc declares fallocate only under _GNU_SOURCE).
   Returns 0, or -1 with errno set. */
static inline int trellis_reserve_blocks(int fd, long long offset, long long length) {
    return (int)syscall(SYS_fallocate, fd, 1 /* FALLOC_FL_KEEP_SIZE */, (long long)offset, (long long)length);
}
#else
#include <errno.h>
static inline int trellis_reserve_blocks(int fd, long long offset, long long length) {
    (void)fd; (void)offset; (void)length;
    errno = EOPNOTSUPP;
    return -1;
}
#endif

#endif
