// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * timed_writer - a RocksDB write load that times itself, for
 * bench/window_cost.py: what a window of --mode window costs the workload,
 * moment by moment.
 *
 * Like db_bench fillrandom (16-byte random keys, 100-byte values, default
 * options): --threads writers Put for --seconds, each counting its Puts in
 * buckets of --bucket-ms by CLOCK_MONOTONIC (the clock of windows.tsv).
 * At the end, on stdout:
 *   # t0_ns T bucket_ns B puts N rate R
 *   i count         (Puts of all threads that ended in bucket i)
 */
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "../../runners/workloads/flags.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <time.h>

namespace {

[[noreturn]] void usage(const char *why)
{
	fprintf(stderr, "timed_writer: %s\nusage: timed_writer --db=DIR "
		"[--seconds=10] [--threads=1] [--sync=false] [--bucket-ms=5]\n", why);
	exit(2);
}

unsigned long long now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void writer(rocksdb::DB *db, bool sync, unsigned seed, unsigned long long t0,
	    unsigned long long end, unsigned long long bucket_ns,
	    std::vector<unsigned> *counts)
{
	std::mt19937_64 rng(seed);
	rocksdb::WriteOptions wo;
	char key[17], value[100];
	unsigned long long t;

	wo.sync = sync;
	for (size_t i = 0; i < sizeof(value); i++)
		value[i] = 'a' + i % 26;
	while ((t = now_ns()) < end) {
		snprintf(key, sizeof(key), "%016llx", (unsigned long long)rng());
		rocksdb::Status s = db->Put(wo, rocksdb::Slice(key, 16),
					    rocksdb::Slice(value, sizeof(value)));
		if (!s.ok()) {
			fprintf(stderr, "timed_writer: Put: %s\n", s.ToString().c_str());
			exit(1);
		}
		(*counts)[(now_ns() - t0) / bucket_ns]++;
	}
}

}  // namespace

int main(int argc, char **argv)
{
	const char *db_dir = nullptr, *v;
	double seconds = 10;
	int threads = 1;
	bool sync = false;
	unsigned long long bucket_ns = 5000000ULL;

	for (int i = 1; i < argc; i++) {
		if (flag(argv[i], "--db", &v))
			db_dir = v;
		else if (flag(argv[i], "--seconds", &v))
			seconds = atof(v);
		else if (flag(argv[i], "--threads", &v))
			threads = atoi(v);
		else if (flag(argv[i], "--sync", &v))
			sync = !strcmp(v, "true") || !strcmp(v, "1");
		else if (flag(argv[i], "--bucket-ms", &v))
			bucket_ns = (unsigned long long)(atof(v) * 1e6);
		else
			usage("unknown argument");
	}
	if (!db_dir || seconds <= 0 || threads < 1 || bucket_ns < 100000)
		usage("--db is required; --seconds, --threads > 0; --bucket-ms >= 0.1");

	rocksdb::Options options;
	options.create_if_missing = true;
	rocksdb::DB *db;
	rocksdb::Status s = rocksdb::DB::Open(options, db_dir, &db);
	if (!s.ok()) {
		fprintf(stderr, "timed_writer: open %s: %s\n", db_dir, s.ToString().c_str());
		return 1;
	}
	unsigned long long t0 = now_ns();
	unsigned long long end = t0 + (unsigned long long)(seconds * 1e9);
	/* a Put that ends after `end` lands in one of the two spare buckets */
	size_t nbuckets = (end - t0) / bucket_ns + 2 + 1000000000ULL / bucket_ns;
	std::vector<std::vector<unsigned>> counts(threads, std::vector<unsigned>(nbuckets));
	std::vector<std::thread> pool;

	for (int i = 0; i < threads; i++)
		pool.emplace_back(writer, db, sync, 1 + i, t0, end, bucket_ns, &counts[i]);
	for (auto &th : pool)
		th.join();

	unsigned long long puts = 0;
	std::vector<unsigned long long> sum(nbuckets);
	for (auto &c : counts)
		for (size_t i = 0; i < nbuckets; i++) {
			sum[i] += c[i];
			puts += c[i];
		}
	printf("# t0_ns %llu bucket_ns %llu puts %llu rate %.0f\n", t0, bucket_ns, puts,
	       puts / seconds);
	for (size_t i = 0; i < (end - t0) / bucket_ns; i++)	/* whole buckets */
		printf("%zu %llu\n", i, sum[i]);
	delete db;
	return 0;
}
