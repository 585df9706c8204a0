#!/usr/bin/env python3
"""Durability of the workload itself: kill a writer mid-run, reopen, count.

    sudo ./runners/experiments/durability.py [-o DIR] [--kill-after S] [--settings NAME,...]

For each setting a writer (RocksDB: .output/ack_writer; SQLite:
runners/workloads/sqlite_acks.py) writes one key per acknowledged write and records
the acknowledged count in a shared mapping that survives it; after
--kill-after seconds it gets SIGKILL; the database is then reopened (WAL
replay, hot-journal rollback) under trace_wal.py and every acknowledged key
is looked up.  A process crash, not a power cut: data in the page cache
survives it, so this measures what the process itself held back (memtable
without WAL, unflushed WAL buffer), not what fsync protects against.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENV_PY = ROOT / ".venv" / "bin" / "python"
if VENV_PY.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
    os.execv(str(VENV_PY), [str(VENV_PY), str(Path(__file__).resolve())] + sys.argv[1:])
sys.path.insert(0, str(ROOT))

from runners.command.plan import TraceError, TraceOptions  # noqa: E402
from runners.command.trace import trace  # noqa: E402
from runfolder.files import RunFolder  # noqa: E402
from collectors.session import RunAs, SessionError, chown_tree  # noqa: E402

ACK_WRITER = ROOT / ".output" / "ack_writer"
SQLITE_ACKS = ROOT / "runners" / "workloads" / "sqlite_acks.py"
# name -> (engine, writer arguments)
SETTINGS: dict[str, tuple[str, list[str]]] = {
    "rocksdb-sync": ("rocksdb", ["--sync=true"]),
    "rocksdb-async": ("rocksdb", ["--sync=false"]),
    "rocksdb-manual_wal_flush": ("rocksdb", ["--sync=false", "--manual_wal_flush=true"]),
    "rocksdb-disable_wal": ("rocksdb", ["--disable_wal=true"]),
    "sqlite-delete-full": ("sqlite", ["delete", "full"]),
    "sqlite-truncate-full": ("sqlite", ["truncate", "full"]),
    "sqlite-wal-full": ("sqlite", ["wal", "full"]),
    "sqlite-wal-normal": ("sqlite", ["wal", "normal"]),
    "sqlite-off-off": ("sqlite", ["off", "off"]),
}
VERIFY = re.compile(r"verify: present (\d+) of (\d+), prefix (\d+)(?:, integrity (.+))?")


class DurabilityError(RuntimeError):
    pass


def writer_argv(engine: str, args: list[str], db: Path, ack: Path) -> list[str]:
    if engine == "rocksdb":
        return [str(ACK_WRITER), f"--db={db}", f"--ack-file={ack}", *args]
    return ["python3", str(SQLITE_ACKS), "write", str(db), *args, str(ack)]


def verify_argv(engine: str, db: Path, n: int) -> list[str]:
    if engine == "rocksdb":
        return [str(ACK_WRITER), f"--db={db}", f"--verify={max(n, 1)}"]
    return ["python3", str(SQLITE_ACKS), "verify", str(db), str(max(n, 1))]


def run_writer(argv: list[str], run_as: RunAs, kill_after: float) -> None:
    kw: dict[str, Any] = {}
    if os.getuid() == 0 and run_as.uid != 0:
        kw = dict(user=run_as.uid, group=run_as.gid, extra_groups=list(run_as.groups))
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=run_as.env(), cwd=ROOT, text=True, **kw)
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], 30)
    if not ready or p.stdout.readline().strip() != "ready":
        p.kill()
        raise DurabilityError(f"{argv[0]}: the writer did not start: "
                              f"{(p.communicate()[1] or '').strip()[-300:]}")
    time.sleep(kill_after)
    p.send_signal(signal.SIGKILL)
    p.wait()


def one(name: str, out: Path, run_as: RunAs, kill_after: float) -> dict[str, Any]:
    engine, args = SETTINGS[name]
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    chown_tree(d, run_as)
    db = d / ("db" if engine == "rocksdb" else "t.db")
    ack = d / "acked"
    run_writer(writer_argv(engine, args, db, ack), run_as, kill_after)
    acked = struct.unpack("<q", ack.read_bytes()[:8])[0]
    t0 = time.monotonic()
    res = trace(TraceOptions(command=verify_argv(engine, db, acked), output=d / "reopen",
                             user=run_as.name, echo=False, print_table=False,
                             cwd=str(ROOT), allow_empty=True,   # it reads back
                             mode="full",    # a short run: every write
                             force=True))    # the last run of this setting
    reopen_s = time.monotonic() - t0
    log = RunFolder(res.run_dir).command_log.read_text()
    m = VERIFY.search(log)
    if res.exit_code != 0 or not m:
        raise DurabilityError(f"{name}: reopen failed: {log.strip()[-300:]}")
    present = int(m.group(1))
    io = res.summary
    return {"setting": name, "engine": engine, "acknowledged": acked,
            "survived": present, "lost": acked - present if acked else 0,
            "prefix": int(m.group(3)), "integrity": m.group(4) or "n/a",
            "reopen_s": round(reopen_s, 2), "reopen_run": str(res.run_dir.relative_to(out)),
            "reopen_syncs": io["wal"]["sync"]["all_count"]
            + sum(v.get("count", 0) for k, v in io.get("sqlite", {}).items()
                  if isinstance(v, dict) and k.endswith("sync")),
            "lost_events": sum(io["lost_events"].values())}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| setting | acknowledged | survived | lost | integrity | reopen (s) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['setting']} | {r['acknowledged']} | {r['survived']} | "
                     f"{r['lost']} | {r['integrity']} | {r['reopen_s']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "runs" / "durability")
    ap.add_argument("--kill-after", type=float, default=1.0, metavar="SECONDS")
    ap.add_argument("--settings", default=",".join(SETTINGS),
                    help=f"comma-separated, from: {', '.join(SETTINGS)}")
    ap.add_argument("--user", help="run the writers as this user (default SUDO_USER)")
    a = ap.parse_args(argv)
    names = [s for s in a.settings.split(",") if s]
    bad = [s for s in names if s not in SETTINGS]
    if bad or not names:
        print(f"durability: unknown setting {bad[0] if bad else '(none)'} "
              f"(choose from {', '.join(SETTINGS)})", file=sys.stderr)
        return 2
    if not 0 < a.kill_after <= 600:
        print("durability: --kill-after must be in (0, 600] seconds", file=sys.stderr)
        return 2
    if not ACK_WRITER.exists():
        print(f"durability: {ACK_WRITER} is missing: run `make`", file=sys.stderr)
        return 1
    try:
        run_as = RunAs.lookup(a.user)
        a.output.mkdir(parents=True, exist_ok=True)
        rows = [one(n, a.output, run_as, a.kill_after) for n in names]
    except (DurabilityError, TraceError, SessionError, OSError) as e:
        print(f"durability: {e}", file=sys.stderr)
        return 1
    (a.output / "durability.json").write_text(json.dumps(rows, indent=1) + "\n")
    (a.output / "durability.md").write_text(table(rows) + "\n")
    chown_tree(a.output, run_as)
    print(table(rows))
    print(f"results: {a.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
