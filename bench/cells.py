"""The workloads that only a lent many-core machine runs (bench/many_cores.sh),
one definition for bench/overhead.py and bench/truth.py: db_bench fillrandom
args, 16 threads meeting 16 cores (not in either's default selection)."""
from __future__ import annotations

MANY_CORE: dict[str, list[str]] = {
    "sync-on-16t": ["--sync=true", "--threads=16", "--num=1000"],
    "sync-off-16t": ["--sync=false", "--threads=16", "--num=25000"],
}
