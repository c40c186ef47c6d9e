/* hash.h: content hashing, BLAKE3 (hash.c; the same digests as LLVM's
 * llvm-c/blake3.h, without libLLVM). Hashes are printed as 64 lowercase hex
 * digits. */
#ifndef MTPC_HASH_H
#define MTPC_HASH_H

#include <stddef.h>

#define MTPC_HASH_HEX_LEN 64

/* Hash len bytes of data into hex (MTPC_HASH_HEX_LEN + 1 bytes). */
void mtpc_hash_hex(const void *data, size_t len, char hex[MTPC_HASH_HEX_LEN + 1]);

/* Incremental form: feed several pieces (e.g. module bytes, then options). */
typedef struct mtpc_hasher mtpc_hasher;
mtpc_hasher *mtpc_hasher_new(void);
void mtpc_hasher_update(mtpc_hasher *h, const void *data, size_t len);
/* Writes the digest and frees h. */
void mtpc_hasher_finish(mtpc_hasher *h, char hex[MTPC_HASH_HEX_LEN + 1]);

#endif
