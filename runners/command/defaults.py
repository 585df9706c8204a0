"""Defaults the command line shows and the tracer applies (one place)."""

# (the modes, the default one and each mode's sample rate: probepoints/modes.py)
# the default mode's overhead budget: a share of the workload's throughput
BUDGET = 0.02
STACK_METHODS = ("off", "auto", "bpf", "dwarf")
# off-CPU periods whose stacks are walked: 1 in this many
OFFCPU_STACK_EVERY = 8
# on-CPU flame graphs (--stacks bpf) and the sampled CRC split
SAMPLE_HZ = 499
# the wall sweep (probes/wall.bpf.h): every traced thread's state and
# kernel accounting this often, and at each window's edge; what it reads
# between windows is the untouched lens (analysis/untouched.py).  A sweep
# of ~40 threads takes the collector ~30 us on its own CPU time, nothing
# on the workload's path
WALL_HZ = 97
# perf's dwarf unwinding copies 16 KiB per sample
DWARF_HZ = 99
# --mode window: windows of this length, open this share of the time, one
# at a random moment in each stretch of the length over the share.  Inside
# a window an unsynced write runs at ~0.3 of its speed (full mode's 11
# probe hits a write), so the duty bounds
# the cost: 4% open cost 6% on 1-thread sync=false db_bench (0.94, 5
# pairs; bench/results/NOTES.md), 2% is the default.  50 ms windows (the
# attach takes ~12 ms before one opens, off the workload's path) give a
# 30 s run ~12 windows to estimate across
WINDOW_MS = 50
WINDOW_DUTY = 0.02
