#ifndef MAGNETS_HEAP_TUNING_H
#define MAGNETS_HEAP_TUNING_H

/// Makes the C library grow its heaps `bytes` at a time (glibc's M_TOP_PAD), where it can: a
/// sync's threads allocate an outcome per op, and glibc grows a thread's heap a page at a time
/// otherwise, with one system call each. Address space only: pages count once touched.
/// Does nothing on other C libraries.
void magnets_grow_heaps_by(int bytes);

#endif
