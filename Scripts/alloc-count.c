// Counts heap allocations of a process when preloaded (LD_PRELOAD); prints "ALLOCATIONS n" to
// stderr at exit. Built and used by Tests/PreviewLoopTests/AllocationTests.swift.
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static atomic_long count;
void *malloc(size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (!p) atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_realloc(p, n); }
int posix_memalign(void **out, size_t align, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); void *p = __libc_memalign(align, n); if (!p) return 12; *out = p; return 0; }
void *aligned_alloc(size_t align, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(align, n); }
void *memalign(size_t align, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(align, n); }
__attribute__((destructor)) static void report(void) { char b[64]; int k = snprintf(b, sizeof b, "ALLOCATIONS %ld\n", atomic_load(&count)); write(2, b, k); }
