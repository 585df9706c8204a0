// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * zipf_writer - a Zipfian write (then read) load on RocksDB with time-aware
 * tiered storage options, for runners/experiments/scenarios/tiered_zipf.toml (seed 003).
 * db_bench 7.8 has no Zipfian key chooser and no tiered-storage flags.
 *
 * Output follows db_bench's, so analysis/workload_output.py parses both:
 *   fillzipf     :  X micros/op Y ops/sec Z seconds N operations;
 *   Percentiles: P50: .. P75: .. P99: .. P99.9: ..
 * then Statistics::ToString() (tickers and histograms), and the derived
 * "last_level_byte_ratio" lines (bytes read from / stored in the last level).
 *
 * The write thread calls DB::Put, so walscope traces it like db_bench.
 * It writes --writes=N Puts, or for --duration_s=S seconds (the two are
 * exclusive): a fixed time keeps preclude/preserve a fixed share of the
 * run whatever the machine's (or the tracer's) speed; the fillzipf line
 * then counts the Puts actually done.
 */
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/metadata.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include "../flags.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Args {
	std::string db;
	double alpha = 0.9;
	long keys = 100000;
	long writes = 200000;
	bool writes_given = false;
	double duration_s = 0;	/* > 0: write for this long instead of `writes` */
	long reads = 20000;
	int value_size = 100;
	unsigned long preclude = 0;	/* preclude_last_level_data_seconds */
	unsigned long preserve = 0;	/* preserve_internal_time_seconds */
	std::string temperature = "cold";
	bool sync = false;
	unsigned seed = 42;
	long write_buffer = 4 << 20;
};

[[noreturn]] void usage(const char *why)
{
	fprintf(stderr, "zipf_writer: %s\n"
		"usage: zipf_writer --db=DIR [--alpha=0.9] [--keys=N] [--writes=N | --duration_s=S]\n"
		"  [--reads=N] [--value_size=B] [--preclude_last_level_data_seconds=S]\n"
		"  [--preserve_internal_time_seconds=S] [--last_level_temperature=hot|warm|cold|unknown]\n"
		"  [--sync=true|false] [--seed=N] [--write_buffer_size=B]\n", why);
	exit(2);
}

long num(const char *name, const char *v, double lo, double hi)
{
	char *end;
	double d = strtod(v, &end);

	if (!*v || *end || d < lo || d > hi) {
		char msg[256];
		snprintf(msg, sizeof(msg), "--%s=%s: want a number in [%g, %g]",
			 name, v, lo, hi);
		usage(msg);
	}
	return (long)d;
}

Args parse(int argc, char **argv)
{
	Args a;
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (flag(s, "--db", &v))
			a.db = v;
		else if (flag(s, "--alpha", &v)) {
			num("alpha", v, 0, 10);
			a.alpha = strtod(v, nullptr);
		} else if (flag(s, "--keys", &v))
			a.keys = num("keys", v, 1, 1e9);
		else if (flag(s, "--writes", &v)) {
			a.writes = num("writes", v, 1, 1e10);
			a.writes_given = true;
		} else if (flag(s, "--duration_s", &v)) {
			num("duration_s", v, 0.001, 1e6);
			a.duration_s = strtod(v, nullptr);
		}
		else if (flag(s, "--reads", &v))
			a.reads = num("reads", v, 0, 1e10);
		else if (flag(s, "--value_size", &v))
			a.value_size = num("value_size", v, 1, 1 << 24);
		else if (flag(s, "--preclude_last_level_data_seconds", &v))
			a.preclude = num("preclude_last_level_data_seconds", v, 0, 1e9);
		else if (flag(s, "--preserve_internal_time_seconds", &v))
			a.preserve = num("preserve_internal_time_seconds", v, 0, 1e9);
		else if (flag(s, "--last_level_temperature", &v))
			a.temperature = v;
		else if (flag(s, "--sync", &v))
			a.sync = !strcmp(v, "true") || !strcmp(v, "1");
		else if (flag(s, "--seed", &v))
			a.seed = num("seed", v, 0, 4e9);
		else if (flag(s, "--write_buffer_size", &v))
			a.write_buffer = num("write_buffer_size", v, 1 << 16, 1e10);
		else
			usage((std::string("unknown argument ") + s).c_str());
	}
	if (a.db.empty())
		usage("--db is required");
	if (a.writes_given && a.duration_s > 0) {
		/* one line: which of the two to drop */
		fprintf(stderr, "zipf_writer: --writes and --duration_s are exclusive: "
			"give one (a count of Puts or seconds of them)\n");
		exit(2);
	}
	return a;
}

rocksdb::Temperature temperature(const std::string &t)
{
	if (t == "hot")
		return rocksdb::Temperature::kHot;
	if (t == "warm")
		return rocksdb::Temperature::kWarm;
	if (t == "cold")
		return rocksdb::Temperature::kCold;
	if (t == "unknown")
		return rocksdb::Temperature::kUnknown;
	usage("--last_level_temperature: want hot, warm, cold or unknown");
}

/* key ranks drawn with P(rank k) proportional to 1 / k^alpha (k from 1) */
class Zipf {
public:
	Zipf(long n, double alpha, unsigned seed) : rng_(seed), cdf_(n)
	{
		double sum = 0;
		for (long i = 0; i < n; i++) {
			sum += 1.0 / std::pow((double)(i + 1), alpha);
			cdf_[i] = sum;
		}
		for (auto &c : cdf_)
			c /= sum;
	}
	long next()
	{
		double u = uni_(rng_);
		return std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
	}

private:
	std::mt19937_64 rng_;
	std::uniform_real_distribution<double> uni_{0.0, 1.0};
	std::vector<double> cdf_;
};

std::string key_of(long rank)
{
	char k[17];
	/* scatter ranks over the key space so hot keys are not adjacent */
	unsigned long h = (unsigned long)rank * 0x9E3779B97F4A7C15ULL;
	snprintf(k, sizeof(k), "%016lx", h);
	return std::string(k, 16);
}

double pct(std::vector<double> &v, double p)
{
	if (v.empty())
		return 0;
	size_t i = std::min(v.size() - 1, (size_t)(p / 100.0 * v.size()));
	std::nth_element(v.begin(), v.begin() + i, v.end());
	return v[i];
}

void report(const char *name, std::vector<double> &lat, double secs)
{
	double n = lat.size();
	double sum = 0;
	for (double x : lat)
		sum += x;
	printf("%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %ld operations;\n",
	       name, n ? sum / n : 0, (long)(secs > 0 ? n / secs : 0), secs, (long)n);
	double p50 = pct(lat, 50), p75 = pct(lat, 75), p99 = pct(lat, 99),
	       p999 = pct(lat, 99.9);
	printf("Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f\n", p50, p75,
	       p99, p999);
}

double now_us()
{
	using namespace std::chrono;
	return duration<double, std::micro>(steady_clock::now().time_since_epoch())
		.count();
}

}  // namespace

int main(int argc, char **argv)
{
	Args a = parse(argc, argv);
	rocksdb::Options o;
	o.create_if_missing = true;
	o.compaction_style = rocksdb::kCompactionStyleUniversal;
	o.num_levels = 7;
	o.write_buffer_size = a.write_buffer;
	o.preclude_last_level_data_seconds = a.preclude;
	o.preserve_internal_time_seconds = a.preserve;
	o.last_level_temperature = temperature(a.temperature);
	o.statistics = rocksdb::CreateDBStatistics();

	rocksdb::DB *db = nullptr;
	rocksdb::Status s = rocksdb::DB::Open(o, a.db, &db);
	if (!s.ok()) {
		fprintf(stderr, "zipf_writer: cannot open %s: %s\n", a.db.c_str(),
			s.ToString().c_str());
		return 1;
	}
	printf("RocksDB:    version %d.%d.%d\n", ROCKSDB_MAJOR, ROCKSDB_MINOR,
	       ROCKSDB_PATCH);
	if (a.duration_s > 0)
		printf("Zipf:       alpha %.2f over %ld keys, writes for %.3f s, %ld reads, "
		       "value %d B\n", a.alpha, a.keys, a.duration_s, a.reads, a.value_size);
	else
		printf("Zipf:       alpha %.2f over %ld keys, %ld writes, %ld reads, value %d B\n",
		       a.alpha, a.keys, a.writes, a.reads, a.value_size);
	fflush(stdout);

	Zipf z(a.keys, a.alpha, a.seed);
	rocksdb::WriteOptions wo;
	wo.sync = a.sync;
	std::string value(a.value_size, 'v');
	std::vector<double> lat;
	bool timed = a.duration_s > 0;
	lat.reserve(timed ? 1 << 20 : a.writes);
	double t0 = now_us();
	double deadline = t0 + a.duration_s * 1e6;
	for (long i = 0; timed || i < a.writes; i++) {
		std::string k = key_of(z.next());
		snprintf(&value[0], value.size(), "%016ld", i);
		double b = now_us();
		s = db->Put(wo, k, value);
		double e = now_us();
		lat.push_back(e - b);
		if (!s.ok()) {
			fprintf(stderr, "zipf_writer: put: %s\n", s.ToString().c_str());
			return 1;
		}
		if (timed && e >= deadline)
			break;
	}
	report("fillzipf", lat, (now_us() - t0) / 1e6);

	if (a.reads) {
		std::vector<double> rl;
		std::string out;
		rl.reserve(a.reads);
		t0 = now_us();
		for (long i = 0; i < a.reads; i++) {
			std::string k = key_of(z.next());
			double b = now_us();
			db->Get(rocksdb::ReadOptions(), k, &out);
			rl.push_back(now_us() - b);
		}
		report("readzipf", rl, (now_us() - t0) / 1e6);
	}

	rocksdb::ColumnFamilyMetaData md;
	db->GetColumnFamilyMetaData(&md);
	uint64_t last = 0, total = 0;
	int last_level = -1;
	for (auto &l : md.levels)
		if (l.size)
			last_level = l.level;
	for (auto &l : md.levels) {
		total += l.size;
		if (l.level == last_level && last_level == o.num_levels - 1)
			last += l.size;
	}
	auto *st = o.statistics.get();
	uint64_t lr = st->getTickerCount(rocksdb::LAST_LEVEL_READ_BYTES);
	uint64_t nlr = st->getTickerCount(rocksdb::NON_LAST_LEVEL_READ_BYTES);
	printf("last_level_byte_ratio (reads): %.4f\n",
	       lr + nlr ? (double)lr / (lr + nlr) : 0.0);
	printf("last_level_byte_ratio (stored): %.4f of %lu bytes\n",
	       total ? (double)last / total : 0.0, (unsigned long)total);
	printf("STATISTICS:\n%s", st->ToString().c_str());
	delete db;
	return 0;
}
