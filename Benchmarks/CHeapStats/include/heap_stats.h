/* Heap statistics for the memory benchmark: glibc's mallinfo2, which Swift's Glibc module does
   not import. */
#ifndef HEAP_STATS_H
#define HEAP_STATS_H
#include <stddef.h>

/* Bytes handed out by malloc and not yet freed. */
size_t heap_bytes_in_use(void);

#endif
