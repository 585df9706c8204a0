"""Regenerate README.md's generated blocks from the code (`make readme`).

Blocks sit between `<!-- gen:NAME -->` and `<!-- /gen:NAME -->`; a test
fails when README.md differs from what this would write.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def usage() -> str:
    os.environ["COLUMNS"] = "80"
    from collectors.cli import build_parser
    return "```\n" + build_parser().format_help().rstrip() + "\n```"


def schema() -> str:
    """Parquet columns of each file, from a run folder if one is given."""
    from collectors import records as R
    comps = R.rocksdb_components()
    rows = ["| file | columns |", "|---|---|"]
    w = (["start_ns", "pid", "tid", "dur_ns", "leader", "truncated", "partial"]
         + [f"{c}_ns" for c in comps]
         + ["queue_behind_sync_ns", "queue_behind_wal_write_ns", "queue_other_ns",
            "on_p_ns", "on_e_ns", "on_uniform_ns", "mig_p_to_e", "mig_e_to_p",
            "mig_same_type", "migrations", "probe_hits"]
         + [f"{c}_overhead_ns" for c in comps] + [f"{c}_adj_ns" for c in comps]
         + ["dur_adj_ns", "wal_bytes", "syscalls", "cpu_start", "cpu_end", "engine"])
    rows.append("| writes.parquet | " + ", ".join(f"`{c}`" for c in w) + " |")
    io = ["ts_ns", "pid", "tid", "syscall", "lat_ns", "ret", "fd", "ino", "kind",
          "in_write", "cpu", "cpu_type", "thread", "bytes", "path"]
    rows.append("| io.parquet | " + ", ".join(f"`{c}`" for c in io) + " |")
    sc = ["ts_ns", "pid", "tid", "event", "dur_ns", "from_cpu", "to_cpu", "from_type",
          "to_type", "in_write", "preempted", "thread"]
    rows.append("| sched.parquet | " + ", ".join(f"`{c}`" for c in sc) + " |")
    sa = ["ts_ns", "pid", "tid", "cpu", "thread", "symbol", "component", "in_write"]
    rows.append("| samples.parquet (sample mode) | " + ", ".join(f"`{c}`" for c in sa) + " |")
    return "\n".join(rows)


BLOCKS = {"usage": usage, "schema": schema}


def render(text: str) -> str:
    for name, fn in BLOCKS.items():
        pat = re.compile(rf"(<!-- gen:{name} -->\n).*?(\n<!-- /gen:{name} -->)", re.S)
        text = pat.sub(lambda m: m.group(1) + fn() + m.group(2), text)
    return text


def main() -> int:
    p = ROOT / "README.md"
    new = render(p.read_text())
    if "--check" in sys.argv:
        return 0 if new == p.read_text() else 1
    p.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
