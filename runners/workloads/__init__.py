"""The programs walscope traces in its tests, benchmarks and studies: each
runs on its own (standard library, or a C++ driver built by make) and
imports nothing of walscope."""
