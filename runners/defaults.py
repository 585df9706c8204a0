"""Defaults the command line shows and the tracer applies (one place)."""

# the mode of a plain trace_wal.py command: every write while tracing every
# write costs at most BUDGET of throughput (estimated live from the probes'
# hits and their calibrated costs), else full's probes in windows whose
# duty the budget buys (collectors/budget.h); sampling all along
MODE = "budget"
# the default mode's overhead budget: a share of the workload's throughput
BUDGET = 0.02
# modes whose probes open and close in windows (windows.tsv)
WINDOWED = ("budget", "window")
STACK_METHODS = ("off", "auto", "bpf", "dwarf")
# off-CPU periods whose stacks are walked: 1 in this many
OFFCPU_STACK_EVERY = 8
# on-CPU flame graphs (--stacks bpf) and the sampled CRC split
SAMPLE_HZ = 499
# sample mode's own rate: the timer interrupts perturb 4-thread sync=false
# db_bench far beyond their run time (2 us a sample), by RocksDB's adaptive
# yield: 5-12% at 199 Hz and up, and at 99 Hz 0.97 in one regime and 0.92
# in a faster one (30 pairs each); 49 Hz read 0.98 in the faster one
SAMPLE_MODE_HZ = 49
# perf's dwarf unwinding copies 16 KiB per sample
DWARF_HZ = 99
# --mode window: windows of this length, open this share of the time, at
# Poisson-distributed moments.  Inside a window an unsynced write runs at
# ~0.3 of its speed (full mode's 11 probe hits a write), so the duty bounds
# the cost: 4% open cost 6% on 1-thread sync=false db_bench (0.94, 5
# pairs; bench/results/NOTES.md), 2% is the default.  50 ms windows (the
# attach takes ~12 ms before one opens, off the workload's path) give a
# 30 s run ~12 windows to estimate across
WINDOW_MS = 50
WINDOW_DUTY = 0.02
