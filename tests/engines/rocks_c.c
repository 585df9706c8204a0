// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocks_c - a RocksDB writer through the C API, loaded every way a real
 * program loads it (tests/test_engines.py traces each):
 *   rocks_c copy LIB DB N        copy LIB to a fresh temporary path, dlopen()
 *                                that copy, N synced puts
 *   rocks_c open LIB DB N        dlopen() LIB where it is, N synced puts
 *   rocks_c two LIB DB1 DB2 N    two databases in one process: a thread
 *                                writing DB1 synced, two writing DB2 unsynced;
 *                                prints "tid DB1|DB2 TID" for each thread
 *   rocks_c linked DB N          (built with -DLINKED against librocksdb.a)
 * It prints "puts N" when done.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <rocksdb/c.h>

struct api {
	rocksdb_options_t *(*options_create)(void);
	void (*options_set_create_if_missing)(rocksdb_options_t *, unsigned char);
	rocksdb_t *(*open)(const rocksdb_options_t *, const char *, char **);
	rocksdb_writeoptions_t *(*writeoptions_create)(void);
	void (*writeoptions_set_sync)(rocksdb_writeoptions_t *, unsigned char);
	void (*put)(rocksdb_t *, const rocksdb_writeoptions_t *, const char *,
		    size_t, const char *, size_t, char **);
	void (*close)(rocksdb_t *);
};

static struct api api;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "rocks_c: %s: %s\n", what, why);
	exit(1);
}

#ifdef LINKED
static void load(const char *lib)
{
	api.options_create = rocksdb_options_create;
	api.options_set_create_if_missing = rocksdb_options_set_create_if_missing;
	api.open = rocksdb_open;
	api.writeoptions_create = rocksdb_writeoptions_create;
	api.writeoptions_set_sync = rocksdb_writeoptions_set_sync;
	api.put = rocksdb_put;
	api.close = rocksdb_close;
}
#else
#define SYM(field, name)						\
	do {								\
		*(void **)&api.field = dlsym(h, name);			\
		if (!api.field)						\
			die(name, dlerror());				\
	} while (0)

static void load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		die(lib, dlerror());
	SYM(options_create, "rocksdb_options_create");
	SYM(options_set_create_if_missing, "rocksdb_options_set_create_if_missing");
	SYM(open, "rocksdb_open");
	SYM(writeoptions_create, "rocksdb_writeoptions_create");
	SYM(writeoptions_set_sync, "rocksdb_writeoptions_set_sync");
	SYM(put, "rocksdb_put");
	SYM(close, "rocksdb_close");
}
#endif

/* a copy of lib at a path nobody could have named before the run */
static char *fresh_copy(const char *lib)
{
	char dir[] = "/tmp/rocks_c-XXXXXX", buf[1 << 16];
	static char path[4096];
	int in, out;
	ssize_t n;

	if (!mkdtemp(dir))
		die("mkdtemp", strerror(errno));
	snprintf(path, sizeof(path), "%s/librocksdb-copy.so", dir);
	in = open(lib, O_RDONLY);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (in < 0 || out < 0)
		die(lib, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			die(path, strerror(errno));
	close(in);
	close(out);
	return path;
}

static rocksdb_t *open_db(const char *path)
{
	rocksdb_options_t *o = api.options_create();
	char *err = NULL;
	rocksdb_t *db;

	api.options_set_create_if_missing(o, 1);
	db = api.open(o, path, &err);
	if (err)
		die(path, err);
	return db;
}

static void puts_n(rocksdb_t *db, long n, int sync, const char *prefix)
{
	rocksdb_writeoptions_t *w = api.writeoptions_create();
	char key[64], *err = NULL;
	long i;

	api.writeoptions_set_sync(w, sync);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s-%08ld", prefix, i);
		api.put(db, w, key, strlen(key), "value-of-a-write", 16, &err);
		if (err)
			die("put", err);
	}
}

struct job {
	rocksdb_t *db;
	long n;
	int sync;
	const char *name;
};

static void *writer(void *arg)
{
	struct job *j = arg;
	char prefix[32];

	printf("tid %s %ld\n", j->name, (long)syscall(SYS_gettid));
	fflush(stdout);
	snprintf(prefix, sizeof(prefix), "%s-%ld", j->name, (long)syscall(SYS_gettid));
	puts_n(j->db, j->n, j->sync, prefix);
	return NULL;
}

int main(int argc, char **argv)
{
	rocksdb_t *db, *db2;
	pthread_t th[3];
	struct job jobs[3];
	int i;

	if (argc == 5 && !strcmp(argv[1], "copy")) {
		load(fresh_copy(argv[2]));
		db = open_db(argv[3]);
		puts_n(db, atol(argv[4]), 1, "k");
	} else if (argc == 5 && !strcmp(argv[1], "open")) {
		load(argv[2]);
		db = open_db(argv[3]);
		puts_n(db, atol(argv[4]), 1, "k");
	} else if (argc == 6 && !strcmp(argv[1], "two")) {
		load(argv[2]);
		db = open_db(argv[3]);
		db2 = open_db(argv[4]);
		jobs[0] = (struct job){ db, atol(argv[5]), 1, "DB1" };
		jobs[1] = (struct job){ db2, atol(argv[5]), 0, "DB2" };
		jobs[2] = (struct job){ db2, atol(argv[5]), 0, "DB2" };
		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, writer, &jobs[i]);
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		api.close(db2);
	} else if (argc == 4 && !strcmp(argv[1], "linked")) {
		load(NULL);
		db = open_db(argv[2]);
		puts_n(db, atol(argv[3]), 1, "k");
	} else {
		fprintf(stderr, "usage: rocks_c copy|open LIB DB N | two LIB DB1 DB2 N"
				" | linked DB N\n");
		return 2;
	}
	api.close(db);
	printf("puts %s\n", argv[argc - 1]);
	return 0;
}
