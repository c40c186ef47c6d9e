/* ptrmap.c: see ptrmap.h. Linear probing, power-of-two capacity. */
#include "ptrmap.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t slot(const ptrmap *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (m->cap - 1);
}

void ptrmap_init(ptrmap *m)
{
	m->cap = 64;
	m->len = 0;
	m->keys = xcalloc(m->cap, sizeof *m->keys);
	m->vals = xcalloc(m->cap, sizeof *m->vals);
}

void ptrmap_free(ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

void ptrmap_clear(ptrmap *m)
{
	memset(m->keys, 0, m->cap * sizeof *m->keys);
	m->len = 0;
}

static void grow(ptrmap *m)
{
	ptrmap n = {xcalloc(m->cap * 2, sizeof *m->keys), xcalloc(m->cap * 2, sizeof *m->vals), m->cap * 2, 0};
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			ptrmap_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
}

static size_t find(const ptrmap *m, const void *key)
{
	size_t i = slot(m, key);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void ptrmap_put(ptrmap *m, const void *key, int val)
{
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	size_t i = find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
}

int ptrmap_add(ptrmap *m, const void *key, int val)
{
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	size_t i = find(m, key);
	if (m->keys[i])
		return 0;
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
	return 1;
}

int ptrmap_get(const ptrmap *m, const void *key, int dflt)
{
	size_t i = find(m, key);
	return m->keys[i] ? m->vals[i] : dflt;
}
