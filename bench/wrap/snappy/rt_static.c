#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
/* compress each file argument, print FNV hash of compressed bytes and round-trip status */
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb"); if (!f) { perror(argv[i]); return 2; }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *in = malloc(n + 1); if (fread(in, 1, n, f) != (size_t)n) return 3; fclose(f);
    size_t cl = snappy_max_compressed_length(n); char *c = malloc(cl);
    if (snappy_compress(in, n, c, &cl) != SNAPPY_OK) return 4;
    unsigned long long h = 1469598103934665603ULL;
    for (size_t k = 0; k < cl; k++) h = (h ^ (unsigned char)c[k]) * 1099511628211ULL;
    size_t ul; int ok = snappy_uncompressed_length(c, cl, &ul) == SNAPPY_OK && ul == (size_t)n;
    char *u = malloc(ul + 1); size_t ul2 = ul;
    ok = ok && snappy_uncompress(c, cl, u, &ul2) == SNAPPY_OK && ul2 == (size_t)n;
    for (long k = 0; ok && k < n; k++) ok = in[k] == u[k];
    ok = ok && snappy_validate_compressed_buffer(c, cl) == SNAPPY_OK;
    printf("%ld %zu %016llx %s\n", n, cl, h, ok ? "ok" : "BAD");
    free(in); free(c); free(u);
  }
  return 0;
}
