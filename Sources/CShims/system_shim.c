#include "system_shim.h"
#include <malloc.h>

void imgbake_limit_malloc_arenas(int count) {
#ifdef M_ARENA_MAX
    mallopt(M_ARENA_MAX, count);
#else
    (void)count;
#endif
}
