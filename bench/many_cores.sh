#!/usr/bin/env bash
# Truth and overhead where cores outnumber threads, and at 16 threads: the
# checks a 2-core VM cannot make, sized for one ~8-minute call on a lent
# 16-core machine (packed by ../shared/bare-host/bundle.sh into .devbundle/).
#
#   bash bench/many_cores.sh OUT_DIR
#
# Each step writes into OUT_DIR as it goes (truth-16core.json, overhead.json,
# log), so a call cut short keeps what it measured.  Figures land in
# bench/results/many_cores/ with the machine's description (machine.txt).
set -u
out=${1:?usage: bench/many_cores.sh OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd); cd "$here"
{
	echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
	lsblk -d -o NAME,ROTA,SIZE,MODEL 2>/dev/null | head -5
} > "$out/machine.txt"
cat "$out/machine.txt"
case $(uname -r) in [0-4].*) echo "kernel too old for walscope's probes"; exit 2;; esac

# a smoke run first: a broken set-up costs seconds, not the call
./trace_wal.py -q -o /tmp/smoke -- db_bench --benchmarks=fillrandom --db=/tmp/smoke-db \
	--sync=true --num=200 >"$out/smoke.log" 2>&1 || { tail -20 "$out/smoke.log"; exit 3; }
tail -3 "$out/smoke.log"

# truth: one workload per call, merged, so each survives a cut
for wl in sync-on-16t sync-off-16t sync-on-1t sync-off-4t; do
	timeout 150 bench/truth.py --reps 2 --workloads $wl --modes budget,full \
		-o "$out" --name truth-16core --merge 2>&1 | grep -E '^truth:|\|' | tail -4
done
# overhead of the default: pairs with an A/A column, each cell kept as measured
for wl in sync-on-16t sync-on-1t sync-off-16t; do
	timeout 120 bench/overhead.py --tools untraced-again,walscope-budget --reps 3 \
		--workloads $wl --merge -o "$out" 2>&1 | grep -E 'rep [0-9]' | tail -6
done
