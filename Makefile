# walscope build: BPF objects, skeletons and the collector, all in .output/
# (generated, never committed).  `make` builds; `make test` and `make demo`
# are the two README commands (they run setup.sh first); `make unit` runs
# the tests that need no root and no build; `make test-load` (root) puts
# every BPF program through the verifier, no workload; `make docs`
# regenerates the generated blocks of README.md, docs/ and
# analysis/queries/*.sql; `make golden` the engines' BPF headers and the
# test layout.
OUTPUT := .output
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
ARCH := x86
CFLAGS := -g -O2 -Wall -Wextra -Wno-unused-parameter
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function
INCLUDES := -I$(OUTPUT) -Iprobes
LIBS := -lbpf -lelf -lz
# the system's Python (Debian's python3-venv): the workload's user and
# non-root analysis must be able to run the venv, so not a per-user build
PYTHON ?= /usr/bin/python3

APPS := walscope-collect walscope-calibrate
HEADERS := $(wildcard probes/*.h)

.PHONY: all clean test test-load demo unit docs readme golden venv venv-spark studies report-png
all: $(addprefix $(OUTPUT)/,$(APPS)) $(OUTPUT)/walscope.btf.json \
	$(OUTPUT)/zipf_writer $(OUTPUT)/ack_writer $(OUTPUT)/rocks_c $(OUTPUT)/rocks_static \
	$(OUTPUT)/timed_writer $(OUTPUT)/budget_check

$(OUTPUT):
	mkdir -p $@

# vmlinux.h from the running kernel's BTF; regenerated only when missing
$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(OUTPUT)/%.bpf.o: probes/%.bpf.c $(HEADERS) $(OUTPUT)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# the record layouts as BTF JSON: runfolder/records.py builds dtypes from it
$(OUTPUT)/walscope.btf.json: $(OUTPUT)/walscope.bpf.o
	$(BPFTOOL) -j btf dump file $< > $@.tmp && mv $@.tmp $@

# the collector: one object per unit of collectors/ in $(OUTPUT)/collect/,
# each rebuilt when a header it includes changes (-MMD: its .d file)
COLLECT_UNITS := walscope_collect collect_options collect_commands collect_attach \
	collect_outputs collect_windows collect_window_log collect_pace collect_sample \
	collect_wall budget
COLLECT_OBJS := $(patsubst %,$(OUTPUT)/collect/%.o,$(COLLECT_UNITS))

$(OUTPUT)/collect:
	mkdir -p $@

$(OUTPUT)/collect/%.o: collectors/%.c | $(OUTPUT)/walscope.skel.h $(OUTPUT)/collect
	$(CC) $(CFLAGS) -MMD -MP $(INCLUDES) -Icollectors -c $< -o $@

-include $(COLLECT_OBJS:.o=.d)

$(OUTPUT)/walscope-collect: $(COLLECT_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) -lm -lpthread

# tests/test_budget.py's driver of the budget's schedule (no BPF)
$(OUTPUT)/budget_check: collectors/budget_check.c collectors/budget.c collectors/budget.h | $(OUTPUT)
	$(CC) $(CFLAGS) -Icollectors $< collectors/budget.c -o $@ -lm

$(OUTPUT)/walscope-calibrate: collectors/walscope_calibrate.c $(OUTPUT)/walscope.skel.h $(HEADERS)
	$(CC) $(CFLAGS) -O1 $(INCLUDES) $< -o $@ $(LIBS)

# seed 003's Zipfian driver, against the system librocksdb
$(OUTPUT)/zipf_writer: runners/workloads/zipf_writer/zipf_writer.cc runners/workloads/flags.h | $(OUTPUT)
	$(CXX) -O2 -g -Wall -std=c++17 $< -o $@ -lrocksdb

# runners/experiments/durability.py's RocksDB writer (acknowledged writes vs a crash)
$(OUTPUT)/ack_writer: runners/workloads/ack_writer/ack_writer.cc runners/workloads/flags.h | $(OUTPUT)
	$(CXX) -O2 -g -Wall -std=c++17 $< -o $@ -lrocksdb

# bench/window_cost.py's writer: Puts counted in time buckets
$(OUTPUT)/timed_writer: bench/timed_writer/timed_writer.cc runners/workloads/flags.h | $(OUTPUT)
	$(CXX) -O2 -g -Wall -std=c++17 $< -o $@ -lrocksdb -lpthread

# tests/test_engines.py's writer: RocksDB by dlopen(), and linked statically
# (Debian's librocksdb-dev ships librocksdb.a: its probe points are in the
# program's own .symtab)
$(OUTPUT)/rocks_c: tests/engines/rocks_c.c | $(OUTPUT)
	$(CC) $(CFLAGS) $< -o $@ -ldl -lpthread

$(OUTPUT)/rocks_static: tests/engines/rocks_c.c | $(OUTPUT)
	$(CXX) -O2 -g -Wall -DLINKED -x c $< -x none -o $@ \
		-Wl,-Bstatic -lrocksdb -Wl,-Bdynamic \
		-lgflags -lsnappy -lz -lbz2 -llz4 -lzstd -lpthread -ldl

test:
	./setup.sh --test

# the Python environment alone (setup.sh installs the system packages first):
# walscope installed editable with its commands (pyproject.toml: walscope,
# trace_wal) and the test tools; venv-spark adds the Spark extra, which
# ./setup.sh --test installs so that the Spark tests run
venv: .venv/.installed
.venv/.installed: pyproject.toml
	$(PYTHON) -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[test]'
	touch $@

venv-spark: .venv/.spark
.venv/.spark: .venv/.installed
	.venv/bin/pip install -q -e '.[test,spark]'
	touch $@

unit: venv
	.venv/bin/python -m pytest -q -m "not root"

# the load-only tier (root): walscope-collect --load-only under each mode's
# options, every program through the verifier, no workload (tests/test_load.py)
test-load: $(OUTPUT)/walscope-collect venv
	.venv/bin/python -m pytest -q -m load

demo:
	./setup.sh --demo

clean:
	rm -rf $(OUTPUT)

docs: venv
	.venv/bin/python -m runners.docs

readme: docs

# the README's picture of the report: the first screen of the demo run's
# report.html in headless Chromium (after ./setup.sh --demo)
report-png: venv
	.venv/bin/python -m viz.screenshot runs/demo/report.html docs/img/report.png

# the five studies from scratch (about an hour), into studies/
studies: all venv
	./runners/study.py all

# the engines' generated headers (probes/*.gen*.h, from the registry:
# engines/bpf_units.py), then the record layout the unit tests read records
# with (tests keep both equal to what they are generated from)
golden: venv
	.venv/bin/python -m engines.bpf_units
	$(MAKE) $(OUTPUT)/walscope.btf.json
	.venv/bin/python -c "from runfolder import records as R; R.write_layout('tests/golden')"
