"""Property tests of the inputs walscope reads: record files and scenario TOML.

CI runs a short budget; bench/fuzz.py runs the same properties for minutes.
Any crash hypothesis finds is kept in its database and replayed here first;
regression inputs found so far are listed explicitly below.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from runfolder import records as R
from tests.conftest import GOLDEN, golden_folder
from analysis.compensation import Calibration
from analysis.io import io_frame
from analysis.writes import writes_frame
from runners.experiments.scenario import ScenarioError, load

BUDGET = int(os.environ.get("WALSCOPE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=BUDGET, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def check_records(blob: bytes, struct: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        (golden_folder(Path(d)) / R.RECORD_FILES[struct]).write_bytes(blob)
        arr = R.read_records(d, struct)
        size = GOLDEN.struct_dtype(struct).itemsize
        assert len(arr) <= len(blob) // size
        if struct == "ws_write_rec":
            for engine in ("rocksdb", "sqlite"):
                w = writes_frame(Path(d), Calibration(pair_in_ns=600, pair_out_ns=700),
                                 engine)
                comps = [c[:-len("_adj_ns")] for c in w.columns
                         if c.endswith("_adj_ns") and c != "dur_adj_ns"]
                # compensation only removes time, and the total is its parts
                for c in comps:
                    assert (w[f"{c}_adj_ns"] <= w[f"{c}_ns"]).all(), c
                assert (sum(w[f"{c}_adj_ns"] for c in comps) == w["dur_adj_ns"]).all()
        if struct == "ws_io_rec":
            io_frame(Path(d))


@FUZZ
@given(st.binary(max_size=4096), st.sampled_from(sorted(R.RECORD_FILES)))
def test_record_reader_never_crashes(blob, struct):
    check_records(blob, struct)


@FUZZ
@given(st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=200))
def test_write_records_with_valid_tag_and_random_fields(words):
    size = GOLDEN.struct_dtype("ws_write_rec").itemsize
    raw = np.array(words, dtype=np.uint64).tobytes()
    raw = (raw * (2 * size // len(raw) + 1))[: size * 2]
    arr = np.frombuffer(raw, dtype=GOLDEN.struct_dtype("ws_write_rec")).copy()
    arr["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_WRITE"]
    check_records(arr.tobytes(), "ws_write_rec")


TOML_ATOMS = st.sampled_from([
    'name = "x"\n', 'command = "db_bench --sync={sync} --db={db}"\n', "[axes]\n",
    "sync = [true, false]\n", "[fixed]\n", "num = 3\n", "repeats = 2\n", 'mode = "full"\n',
    "pin = [\"P\"]\n", "threads = [1, [2]]\n", "= 3\n", "[axes.sub]\n", "x = {a = 1}\n",
    'command = "{unknown}"\n', "repeats = true\n", "\x00", '"\n', "sync = []\n"])


@FUZZ
@given(st.lists(TOML_ATOMS, max_size=12) | st.text(max_size=300).map(lambda t: [t]))
@example(["[axes]\n", "sync = [true, false]\n", "[fixed]\n", "num = 3\n"])
@example(['name = "x"\n', "[axes]\n", "x = {a = 1}\n"])
def test_scenario_loader_fails_only_with_scenario_error(parts):
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "s.toml"
        f.write_text("".join(parts), errors="replace")
        try:
            s = load(f)
        except ScenarioError as e:
            assert str(e).startswith(str(f)) and "\n" not in str(e)
            return
        s.argv(s.cells()[0], "/db")  # a scenario that loads can be expanded
