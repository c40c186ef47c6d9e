/* bitcode.h: recognizing LLVM bitcode by its first bytes. */
#ifndef MTPC_BITCODE_H
#define MTPC_BITCODE_H

#include <stddef.h>

/* Does data (len bytes, possibly fewer than 4) start like an LLVM bitcode
 * file: raw bitcode ('B' 'C' 0xC0 0xDE) or the bitcode wrapper header
 * (0x0B17C0DE, little endian), which Darwin-style tools put in front? */
int mtpc_is_bitcode(const void *data, size_t len);

#endif
