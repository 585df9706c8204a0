// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocks_ext - a CPython extension module with RocksDB linked in statically
 * (librocksdb.a, its symbols kept out of the module's dynamic symbol table
 * with --exclude-libs), as binary wheels of RocksDB bindings ship it:
 * RocksDB's functions are named only in the module's .symtab.
 *
 * Debian's librocksdb.a is built for executables (-fPIE), not for a shared
 * object: a few of its objects use their thread-locals in the local-exec
 * model, which no shared object can, and most reach a few data symbols of
 * the C library as an executable does (PC-relative, through a copy
 * relocation).  tests/test_oneshot.py rebuilds the former from Debian's
 * source with -fPIC (as Debian built librocksdb.so), links libstdc++
 * statically, and this file defines module-private copies of the latter
 * (the end of this file).
 *
 *   import rocks_ext
 *   stats = rocks_ext.puts(DB, N)   # N synced puts through RocksDB's C API;
 *                                   # returns RocksDB's statistics dump
 *                                   # ("rocksdb.wal.synced COUNT : N" ...)
 *
 * tests/test_oneshot.py builds it (with tests/engines/rocks_late.py, the
 * program that imports it late) into .output/bindings/.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <rocksdb/c.h>

static PyObject *fail(char *err)
{
	PyErr_SetString(PyExc_RuntimeError, err);
	free(err);
	return NULL;
}

static PyObject *puts_(PyObject *self, PyObject *args)
{
	const char *path;
	long n, i;
	rocksdb_options_t *o;
	rocksdb_writeoptions_t *w;
	rocksdb_t *db;
	char key[32], *err = NULL, *stats;
	PyObject *ret;

	if (!PyArg_ParseTuple(args, "sl", &path, &n))
		return NULL;
	o = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(o, 1);
	rocksdb_options_enable_statistics(o);
	db = rocksdb_open(o, path, &err);
	if (err)
		return fail(err);
	w = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(w, 1);
	Py_BEGIN_ALLOW_THREADS
	for (i = 0; i < n && !err; i++) {
		snprintf(key, sizeof(key), "k%08ld", i);
		rocksdb_put(db, w, key, strlen(key), "value-of-a-write", 16, &err);
	}
	Py_END_ALLOW_THREADS
	if (err)
		return fail(err);
	stats = rocksdb_options_statistics_get_string(o);
	rocksdb_close(db);
	rocksdb_writeoptions_destroy(w);
	ret = PyUnicode_FromString(stats ? stats : "");
	free(stats);
	rocksdb_options_destroy(o);
	return ret;
}

static PyMethodDef methods[] = {
	{ "puts", puts_, METH_VARARGS,
	  "puts(db, n) -> str: n synced puts; RocksDB's statistics dump" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "rocks_ext",
	"RocksDB (librocksdb.a) linked into an extension module", -1, methods,
};

PyMODINIT_FUNC PyInit_rocks_ext(void)
{
	return PyModule_Create(&module);
}

/*
 * The C library's data that librocksdb.a's objects reach PC-relative, here
 * in the module (hidden, so each reference binds to it):
 * __libc_single_threaded 0 (libstdc++'s reference counts always atomic:
 * correct in any process), stdout and stderr the C library's own streams,
 * read before any other constructor of the module runs.
 */
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
__attribute__((visibility("hidden"))) FILE *stdout, *stderr;

__attribute__((constructor(101))) static void c_library_streams(void)
{
	stdout = *(FILE **)dlsym(RTLD_DEFAULT, "stdout");
	stderr = *(FILE **)dlsym(RTLD_DEFAULT, "stderr");
}
