/* ptrmap.h: an open-addressing hash map from pointers to ints.
 * Used only for lookups (LLVMValueRef -> symbol index); never iterated, so
 * pointer values never influence the output order. */
#ifndef MTPC_PTRMAP_H
#define MTPC_PTRMAP_H

#include <stddef.h>

typedef struct {
	const void **keys;
	int *vals;
	size_t cap, len;
} ptrmap;

void ptrmap_init(ptrmap *m);
void ptrmap_free(ptrmap *m);
/* Set key to val (insert or overwrite). key must not be NULL. */
void ptrmap_put(ptrmap *m, const void *key, int val);
/* The value for key, or dflt. */
int ptrmap_get(const ptrmap *m, const void *key, int dflt);
/* Insert key with val if absent; returns 1 if inserted, 0 if present. */
int ptrmap_add(ptrmap *m, const void *key, int val);
void ptrmap_clear(ptrmap *m);

#endif
