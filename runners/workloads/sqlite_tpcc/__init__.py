"""A TPC-C-like workload for SQLite, written for walscope.

Not an audited TPC-C: the nine tables, per-warehouse cardinalities (scaled
by --scale), the 45/43/4/4/4 mix (each client deals it from a shuffled
deck of a hundred, clause 5.2.4.2), NURand keys and the five transactions'
reads and writes follow the specification; there are no terminals, keying
or think times.  Standard library only, so it runs under any python3.
"""
