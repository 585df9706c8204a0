// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ack_writer - how many acknowledged RocksDB writes survive a crash.
 *
 * write mode: Put keys 0, 1, 2, ... and, after each Put returns, store the
 * count of acknowledged writes in a shared mapping of --ack-file (page
 * cache: it survives the process being killed).  Runs until --writes or
 * until killed (runners/experiments/durability.py sends SIGKILL).
 * verify mode (--verify=N): reopen the database (WAL replay) and print
 *   verify: present P of N, prefix Q
 * P: keys 0..N-1 found; Q: the longest run 0..Q-1 all found.
 */
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "../flags.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {

[[noreturn]] void usage(const char *why)
{
	fprintf(stderr, "ack_writer: %s\nusage: ack_writer --db=DIR (--ack-file=F "
		"[--writes=N] [--sync=true|false] [--disable_wal=true|false] "
		"[--manual_wal_flush=true|false] | --verify=N)\n", why);
	exit(2);
}

bool boolean(const char *name, const char *v)
{
	if (!strcmp(v, "true") || !strcmp(v, "1"))
		return true;
	if (!strcmp(v, "false") || !strcmp(v, "0"))
		return false;
	usage((std::string("--") + name + ": want true or false").c_str());
}

long count(const char *name, const char *v)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (!*v || *end || n < 1)
		usage((std::string("--") + name + ": want a positive integer").c_str());
	return n;
}

std::string key_of(long i)
{
	char k[24];
	snprintf(k, sizeof(k), "%016ld", i);
	return std::string(k);
}

}  // namespace

int main(int argc, char **argv)
{
	const char *db_path = nullptr, *ack_path = nullptr, *v;
	long writes = 100000000, verify = 0;
	bool sync = false, disable_wal = false, manual_flush = false;

	for (int i = 1; i < argc; i++) {
		if (flag(argv[i], "--db", &v))
			db_path = v;
		else if (flag(argv[i], "--ack-file", &v))
			ack_path = v;
		else if (flag(argv[i], "--writes", &v))
			writes = count("writes", v);
		else if (flag(argv[i], "--verify", &v))
			verify = count("verify", v);
		else if (flag(argv[i], "--sync", &v))
			sync = boolean("sync", v);
		else if (flag(argv[i], "--disable_wal", &v))
			disable_wal = boolean("disable_wal", v);
		else if (flag(argv[i], "--manual_wal_flush", &v))
			manual_flush = boolean("manual_wal_flush", v);
		else
			usage((std::string("unknown argument ") + argv[i]).c_str());
	}
	if (!db_path || (!ack_path && !verify))
		usage("--db and --ack-file (or --verify) are required");

	rocksdb::Options o;
	o.create_if_missing = !verify;
	o.manual_wal_flush = manual_flush;
	rocksdb::DB *db = nullptr;
	rocksdb::Status s = rocksdb::DB::Open(o, db_path, &db);
	if (!s.ok()) {
		fprintf(stderr, "ack_writer: cannot open %s: %s\n", db_path,
			s.ToString().c_str());
		return 1;
	}
	if (verify) {
		long present = 0, prefix = -1;
		std::string val;
		for (long i = 0; i < verify; i++) {
			if (db->Get(rocksdb::ReadOptions(), key_of(i), &val).ok())
				present++;
			else if (prefix < 0)
				prefix = i;
		}
		printf("verify: present %ld of %ld, prefix %ld\n", present, verify,
		       prefix < 0 ? verify : prefix);
		delete db;
		return 0;
	}

	int fd = open(ack_path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(ack_path);
		return 1;
	}
	auto *acked = static_cast<volatile long *>(
		mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	if (acked == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	*acked = 0;
	rocksdb::WriteOptions wo;
	wo.sync = sync;
	wo.disableWAL = disable_wal;
	std::string value(100, 'v');
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < writes; i++) {
		s = db->Put(wo, key_of(i), value);
		if (!s.ok()) {
			fprintf(stderr, "ack_writer: put %ld: %s\n", i, s.ToString().c_str());
			return 1;
		}
		*acked = i + 1;
	}
	delete db;
	return 0;
}
