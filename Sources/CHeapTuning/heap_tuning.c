#include "heap_tuning.h"

#include <stdlib.h> // (defines __GLIBC__ on glibc)
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void magnets_grow_heaps_by(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_TOP_PAD, bytes);
#else
    (void)bytes;
#endif
}
