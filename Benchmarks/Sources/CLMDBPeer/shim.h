#ifndef TRELLIS_BENCH_CLMDB_PEER_H
#define TRELLIS_BENCH_CLMDB_PEER_H
/* LMDB (the system library, liblmdb-dev) as StorageBench's peer. */
#include <lmdb.h>
#endif
