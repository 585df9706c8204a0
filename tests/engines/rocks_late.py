"""A Python program that imports a RocksDB binding late: after DELAY
seconds it imports rocks_ext (tests/engines/rocks_ext.c: RocksDB linked
into the extension module statically) from MODULE_DIR and writes N synced
puts through it, then prints RocksDB's statistics and "puts N".

    python3 tests/engines/rocks_late.py MODULE_DIR DB N DELAY
"""
import sys
import time


def main() -> int:
    mod_dir, db, n, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    assert "rocks_ext" not in sys.modules
    time.sleep(delay)
    sys.path.insert(0, mod_dir)
    import rocks_ext
    print(rocks_ext.puts(db, n))
    print(f"puts {n}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
