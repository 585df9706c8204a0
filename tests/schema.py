"""What a run folder's outputs are made of: each Parquet file's columns and
types, and summary.json's key paths (maps keyed by data, such as
transaction types or thread roles, folded to ``*``).  tests/golden/
run_schema.json holds it: first taken from runs analysed before the layers
were split (a refactor must keep it), since then changed only to add what
an issue asked for (engines_found, objects; environment.host and
walscope_commit).  A change to it is a change
users' queries see: regenerate it deliberately, from fresh runs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

GOLDEN = Path(__file__).resolve().parent / "golden" / "run_schema.json"
# summary.json maps whose keys are data (types, roles, components seen)
DATA_KEYED = {"by_type", "sample_breakdown", "roles"}
# ... and maps at these paths (the lenses' components, by what each saw)
DATA_KEYED_PATHS = {"headline.components", "untouched.components", "untouched.blocked_split",
                    "main_phase.components",
                    "untouched.io_per_call"}


def key_paths(d: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if not isinstance(d, dict):
        return out
    for k, v in d.items():
        name = "*" if prefix.rsplit(".", 1)[-1] in DATA_KEYED or prefix in DATA_KEYED_PATHS \
            else k
        path = f"{prefix}.{name}" if prefix else name
        out.add(path)
        out |= key_paths(v, path)
    return out


def schema_of(run_dir: Path) -> dict[str, Any]:
    files = {p.name: [[f.name, str(f.type)] for f in pq.read_schema(p)]
             for p in sorted(Path(run_dir).glob("*.parquet"))}
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    return {"parquet": files, "summary": sorted(key_paths(summary))}


def check(run_dir: Path, kind: str) -> None:
    """The run folder has exactly the golden columns, types and keys."""
    want = json.loads(GOLDEN.read_text())[kind]
    got = schema_of(run_dir)
    assert got["parquet"] == want["parquet"]
    missing = set(want["summary"]) - set(got["summary"])
    extra = set(got["summary"]) - set(want["summary"])
    assert not missing and not extra, f"missing {sorted(missing)}, new {sorted(extra)}"
