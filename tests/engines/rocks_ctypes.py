"""A Python program that loads RocksDB late, the way bindings do: ctypes
loads the system librocksdb after DELAY seconds (or, with DELAY "signal",
when it gets SIGUSR1) and writes N synced puts through RocksDB's C API.
With DELAY "loaded" it loads the library and opens the database first,
says "ready", and writes when it gets SIGUSR1 (a RocksDB program that is
running before it writes, and maps no other engine).
With --sqlite FILE M it also commits M SQLite transactions from the same
process (the interpreter's own sqlite3 module), before and after the
RocksDB writes.

    python3 tests/engines/rocks_ctypes.py DB N DELAY|signal|loaded [--sqlite FILE M]
"""
import ctypes
import signal
import sys
import time

LIB = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"


def rocksdb_puts(path: str, n: int, ready: bool = False) -> None:
    """n synced puts; ready: say so once the database is open, and wait
    for SIGUSR1 before the first."""
    lib = ctypes.CDLL(LIB)
    lib.rocksdb_options_create.restype = ctypes.c_void_p
    lib.rocksdb_open.restype = ctypes.c_void_p
    lib.rocksdb_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.POINTER(ctypes.c_char_p)]
    lib.rocksdb_options_set_create_if_missing.argtypes = [ctypes.c_void_p, ctypes.c_ubyte]
    lib.rocksdb_writeoptions_create.restype = ctypes.c_void_p
    lib.rocksdb_writeoptions_set_sync.argtypes = [ctypes.c_void_p, ctypes.c_ubyte]
    lib.rocksdb_put.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                                ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.POINTER(ctypes.c_char_p)]
    lib.rocksdb_close.argtypes = [ctypes.c_void_p]
    opts = lib.rocksdb_options_create()
    lib.rocksdb_options_set_create_if_missing(opts, 1)
    err = ctypes.c_char_p()
    db = lib.rocksdb_open(opts, path.encode(), ctypes.byref(err))
    if err.value:
        raise SystemExit(f"rocks_ctypes: {err.value.decode()}")
    w = lib.rocksdb_writeoptions_create()
    lib.rocksdb_writeoptions_set_sync(w, 1)
    if ready:
        print("ready", flush=True)
        signal.sigwait([signal.SIGUSR1])
    for i in range(n):
        key = f"k{i:08d}".encode()
        lib.rocksdb_put(db, w, key, len(key), b"value", 5, ctypes.byref(err))
        if err.value:
            raise SystemExit(f"rocks_ctypes: {err.value.decode()}")
    lib.rocksdb_close(db)


def sqlite_commits(path: str, m: int) -> None:
    import sqlite3      # (here: a "loaded" run maps no SQLite)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)")
    for i in range(m):
        con.execute("BEGIN")
        con.execute("INSERT INTO t (v) VALUES (?)", (f"v{i}",))
        con.execute("COMMIT")
    con.close()


def main() -> int:
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    db, n, delay = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lite = sys.argv[sys.argv.index("--sqlite") + 1:] if "--sqlite" in sys.argv else None
    if lite:
        sqlite_commits(lite[0], int(lite[1]) // 2)
    if delay == "signal":
        signal.sigwait([signal.SIGUSR1])
    elif delay != "loaded":
        time.sleep(float(delay))
    rocksdb_puts(db, n, ready=delay == "loaded")
    if lite:
        sqlite_commits(lite[0], int(lite[1]) - int(lite[1]) // 2)
    print(f"puts {n}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
