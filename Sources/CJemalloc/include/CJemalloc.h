// jemalloc (https://jemalloc.net/jemalloc.3.html), linked into `blimp` in place of glibc's malloc: only the function
// Blimp calls of it is declared here, as jemalloc.h declares malloc and free again.
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
