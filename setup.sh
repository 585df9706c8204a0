#!/bin/sh
# setup.sh - everything a fresh Debian/Ubuntu machine needs, then one job.
#   ./setup.sh            install and build only
#   ./setup.sh --demo     ... then trace the default db_bench scenario
#   ./setup.sh --test     ... then run the test suite (what CI runs; adds
#                         the Spark extra, walscope[spark], for its tests)
#   ./setup.sh --uninstall  remove the commands' links (below), nothing else
# Installing puts walscope and trace_wal on the PATH: links in /usr/local/bin
# (sudo's secure_path holds it) to .venv/bin's (runners/command/links.py).
# Idempotent: packages, venv and build are skipped when already in place.
set -eu
cd "$(dirname "$0")"

APT_PKGS="rocksdb-tools librocksdb-dev bpftrace bpftool libbpf-dev clang llvm \
libelf-dev zlib1g-dev pkg-config make gcc g++ linux-perf sqlite3 libsqlite3-dev \
strace binutils python3-venv sudo chromium"
# tests/test_bindings.py's server (MariaDB with MyRocks) and
# tests/test_oneshot.py's Python extension module with librocksdb.a linked
# in (its headers; cmake and dpkg-dev to rebuild the archive's few objects
# a shared object cannot take, from Debian's source); tests/test_serve.py's
# Prometheus server and promtool (the package's own service starts only
# where the init system lets it; the test runs its own)
TEST_APT_PKGS="mariadb-server mariadb-plugin-rocksdb postgresql-15 python3-dev cmake dpkg-dev prometheus"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ "${1:-}" = --uninstall ]; then
	shift
	as_root python3 -m runners.command.links remove "$@"
	exit
fi

# the packages of $@ not installed yet
apt_install() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "setup: installing$missing"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
	fi
}
apt_install $APT_PKGS

make -s venv all
as_root python3 -m runners.command.links add

# flame graph renderer: inferno (crates.io), built into .output/inferno
if [ ! -x .output/inferno/bin/inferno-flamegraph ]; then
	echo "setup: building inferno (flame graph renderer) with cargo"
	# a rustup toolchain when there is one: Debian 12's cargo is too old
	PATH="$HOME/.cargo/bin:$PATH"
	if ! command -v cargo >/dev/null; then
		echo "setup: no cargo; installing rustup's stable toolchain"
		curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
		PATH="$HOME/.cargo/bin:$PATH"
	fi
	cargo install -q --locked --root .output/inferno inferno --version 0.12.8
fi

case "${1:-}" in
--demo)
	shift
	# -q: db_bench's output (--statistics: RocksDB's own counters, ~1,000
	# lines) goes to runs/demo/command.log only, not before the table;
	# --force: the last demo's folder is emptied, never mixed with this one
	as_root ./trace_wal.py -q --force -o runs/demo -- db_bench \
		--benchmarks=fillrandom --num=20000 --threads=4 --sync=true \
		--statistics --db=/tmp/walscope-demo-db "$@"
	echo "db_bench's own output and statistics: runs/demo/command.log"
	;;
--test)
	shift
	make -s venv-spark    # the Spark extra, so the Spark tests run too
	# tests/test_bindings.py's server: MariaDB with MyRocks (~22 MB; the
	# test runs its own mariadbd in a temporary folder; the package's
	# service starts only where the init system lets it); PostgreSQL 15
	# for tests/test_postgres.py (its own throwaway clusters); python3-dev,
	# cmake, dpkg-dev for tests/test_oneshot.py's extension module
	apt_install $TEST_APT_PKGS
	as_root .venv/bin/python -m pytest -q "$@"
	;;
"") ;;
*)
	echo "usage: ./setup.sh [--demo|--test|--uninstall] [extra args]" >&2
	exit 2
	;;
esac
