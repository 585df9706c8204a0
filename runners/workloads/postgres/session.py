"""One psql session kept open for the runner's own queries, so that each
query's CLOCK_MONOTONIC window (time.monotonic_ns(), the clock BPF's
bpf_ktime_get_ns reads) spans the query and not a connection's start."""
from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

from runners.workloads.postgres import binaries
from runners.workloads.postgres.owner import Owner

END = "__walscope_query_end__"
QUERY_TIMEOUT_S = 60.0


class QueryError(RuntimeError):
    """psql or the server refused a query: one line."""


class Session:
    """psql -X -A -t on DIR's socket as the owner, database `database`.
    query() sends one statement and reads its rows (tab-separated fields)
    up to an \\echo'd end mark; an error on psql's stderr raises."""

    def __init__(self, data_dir: Path, port: int, owner: Owner,
                 database: str = "postgres") -> None:
        argv = [binaries.program("psql"), "-X", "-q", "-A", "-t", "-F", "\t",
                "-P", "pager=off", "-h", str(data_dir), "-p", str(port),
                "-U", "postgres", "-d", database]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=owner.env(),
                                     **owner.popen_kw())
        assert self.proc.stdout and self.proc.stderr and self.proc.stdin
        os.set_blocking(self.proc.stderr.fileno(), False)
        self._pending: bytes = b""

    def query(self, sql: str, timeout: float = QUERY_TIMEOUT_S) -> list[list[str]]:
        rows, _, _ = self.timed(sql, timeout)
        return rows

    def timed(self, sql: str, timeout: float = QUERY_TIMEOUT_S
              ) -> tuple[list[list[str]], int, int]:
        """The rows, and monotonic ns just before the statement was sent
        and just after its last row came back."""
        assert self.proc.stdin
        text = sql.strip().rstrip(";") + ";\n\\echo " + END + "\n"
        t0 = time.monotonic_ns()
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise QueryError("psql exited: " + (self._stderr().strip() or "no message")) \
                from None
        out = self._read_to_end(timeout)
        t1 = time.monotonic_ns()
        err = self._stderr()
        if "ERROR:" in err or "FATAL:" in err:
            raise QueryError(f"{sql.split()[0]}: " + next(
                ln for ln in err.splitlines() if "ERROR:" in ln or "FATAL:" in ln).strip())
        return [ln.split("\t") for ln in out.splitlines() if ln], t0, t1

    def _read_to_end(self, timeout: float) -> str:
        assert self.proc.stdout
        fd = self.proc.stdout.fileno()
        mark = (END + "\n").encode()
        end = time.monotonic() + timeout
        buf = self._pending
        while not (buf.startswith(mark) or b"\n" + mark in buf):
            left = end - time.monotonic()
            if left <= 0:
                raise QueryError(f"no answer from psql in {timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise QueryError("psql exited: " + (self._stderr().strip() or "no message"))
                buf += chunk
        cut = 0 if buf.startswith(mark) else buf.index(b"\n" + mark) + 1
        self._pending = buf[cut + len(mark):]
        return buf[:cut].decode()

    def _stderr(self) -> str:
        assert self.proc.stderr
        try:
            data = self.proc.stderr.read() or b""
        except BlockingIOError:
            data = b""
        return data.decode(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin
                self.proc.stdin.close()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
