// kvbench.cc: the program of bench/compile_bench.py's rocksdb workload (a real unity build:
// RocksDB's library, its 322 sources in one translation unit, bench/get-rocksdb.sh). One
// thread, fixed keys and values, no automatic compaction: the same work on every run, so
// that the instructions callgrind counts compare builds, not moments. It writes 40,000 keys
// in batches, flushes, overwrites a quarter, flushes, compacts everything, reads every key
// back, scans, deletes a third, scans again, and prints a checksum of each phase (the
// output every build must print alike).
//
// Usage: kvbench DIR     (DIR: a database folder, destroyed before and after)
#include <cinttypes>
#include <cstdio>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

using namespace ROCKSDB_NAMESPACE;

static const unsigned N = 40000;

static std::string key(unsigned i)
{
	char b[16];
	snprintf(b, sizeof b, "k%08u", (i * 2654435761u) % 100000000u);
	return b;
}

static std::string value(unsigned i, unsigned round)
{
	std::string v(100, 'a' + (i + round) % 26);
	for (unsigned k = 0; k < v.size(); k += 7)
		v[k] = (char)('0' + (i * 31 + k + round) % 10);
	return v;
}

static uint64_t mix(uint64_t h, const Slice &s)
{
	for (size_t i = 0; i < s.size(); i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int check(const Status &s, const char *what)
{
	if (s.ok())
		return 0;
	fprintf(stderr, "kvbench: %s: %s\n", what, s.ToString().c_str());
	return 1;
}

static uint64_t scan(DB *db, unsigned *n)
{
	uint64_t h = 14695981039346656037ull;
	Iterator *it = db->NewIterator(ReadOptions());
	*n = 0;
	for (it->SeekToFirst(); it->Valid(); it->Next(), ++*n)
		h = mix(mix(h, it->key()), it->value());
	delete it;
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: kvbench DIR\n");
		return 2;
	}
	std::string path = argv[1];
	Options opt;
	opt.create_if_missing = true;
	opt.disable_auto_compactions = true;
	opt.write_buffer_size = 1 << 20;
	opt.compression = kNoCompression;
	DestroyDB(path, opt);
	DB *db = nullptr;
	if (check(DB::Open(opt, path, &db), "open"))
		return 1;
	WriteOptions wo;
	wo.disableWAL = false;
	for (unsigned round = 0; round < 2; round++) {
		unsigned step = round ? 4 : 1;
		for (unsigned i = 0; i < N; i += 100 * step) {
			WriteBatch b;
			for (unsigned j = i; j < i + 100 * step && j < N; j += step)
				b.Put(key(j), value(j, round));
			if (check(db->Write(wo, &b), "write"))
				return 1;
		}
		if (check(db->Flush(FlushOptions()), "flush"))
			return 1;
	}
	if (check(db->CompactRange(CompactRangeOptions(), nullptr, nullptr), "compact"))
		return 1;
	uint64_t h = 14695981039346656037ull;
	std::string v;
	for (unsigned i = 0; i < N; i++) {
		if (check(db->Get(ReadOptions(), key(i), &v), "get"))
			return 1;
		h = mix(h, v);
	}
	printf("get %016" PRIx64 "\n", h);
	unsigned n;
	h = scan(db, &n);
	printf("scan %u %016" PRIx64 "\n", n, h);
	for (unsigned i = 0; i < N; i += 3)
		if (check(db->Delete(wo, key(i)), "delete"))
			return 1;
	h = scan(db, &n);
	printf("scan after delete %u %016" PRIx64 "\n", n, h);
	delete db;
	DestroyDB(path, opt);
	return 0;
}
