#ifndef TRELLIS_CLMDB_SHIM_H
#define TRELLIS_CLMDB_SHIM_H
#include <lmdb.h>
#endif
