"""A private MariaDB server for the tests that attach to one with -p."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import contextlib
from collections.abc import Iterator

import pytest

from tests.toolchain import Unavailable, step, tool

MYROCKS_COUNTERS = ("Rocksdb_write_self", "Rocksdb_write_other", "Rocksdb_wal_synced",
                    "Rocksdb_number_keys_written")


class MariaDB:
    """A private mariadbd (its own data folder and socket, no network),
    with the RocksDB storage engine (rocksdb) or InnoDB alone, and a
    client for it."""

    def __init__(self, d: Path, rocksdb: bool = True):
        self.mariadbd = tool("mariadbd", "/usr/sbin/mariadbd")
        self.client = tool("mariadb")
        install = tool("mariadb-install-db")
        plugin = subprocess.run([self.mariadbd, "--no-defaults", "--verbose", "--help"],
                                capture_output=True, text=True).stdout
        plugdir = next((ln.split()[1] for ln in plugin.splitlines()
                        if ln.startswith("plugin-dir ")), "/usr/lib/mysql/plugin")
        if rocksdb and not Path(plugdir, "ha_rocksdb.so").exists():
            raise Unavailable(f"no {plugdir}/ha_rocksdb.so: apt-get install "
                              "mariadb-plugin-rocksdb (./setup.sh --test does)")
        self.d, self.sock = d, str(d / "sock")
        step([install, "--no-defaults", f"--datadir={d / 'data'}", "--user=root",
              "--auth-root-authentication-method=normal", "--skip-test-db"],
             "mariadb-install-db")
        self.proc = subprocess.Popen(
            [self.mariadbd, "--no-defaults", f"--datadir={d / 'data'}",
             f"--socket={self.sock}", "--skip-networking", "--user=root", "--skip-log-bin",
             *(["--plugin-load-add=ha_rocksdb.so", "--rocksdb-flush-log-at-trx-commit=1"]
               if rocksdb else []),
             f"--log-error={d / 'err.log'}", f"--pid-file={d / 'pid'}"])
        end = time.monotonic() + 60
        while subprocess.run([self.client, "--no-defaults", "-S", self.sock, "-u", "root",
                              "-e", "SELECT 1"], capture_output=True).returncode:
            assert self.proc.poll() is None and time.monotonic() < end, \
                (d / "err.log").read_text()[-2000:]
            time.sleep(0.2)

    def sql(self, q: str, db: str = "") -> str:
        p = subprocess.run([self.client, "--no-defaults", "-S", self.sock, "-u", "root",
                            "-N", "-B", *([db] if db else []), "-e", q],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout

    def counters(self, names_: tuple[str, ...] = MYROCKS_COUNTERS) -> dict[str, int]:
        names = ",".join(f"'{c}'" for c in names_)
        out = self.sql(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
        return {k: int(v) for k, v in (ln.split("\t") for ln in out.splitlines())}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextlib.contextmanager
def server(d: Path, rocksdb: bool) -> Iterator[MariaDB]:
    """A MariaDB for one test, stopped after it; the test skips where the
    machine has none (./setup.sh --test installs it)."""
    try:
        m = MariaDB(d, rocksdb=rocksdb)
    except Unavailable as e:
        pytest.skip(f"MariaDB{' with MyRocks' if rocksdb else ''}: {e} (apt-get install "
                    f"mariadb-server{' mariadb-plugin-rocksdb' if rocksdb else ''}; "
                    "./setup.sh --test does)")
    try:
        yield m
    finally:
        m.stop()
