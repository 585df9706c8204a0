"""Regenerate the generated blocks of README.md, docs/*.md and the named
queries, analysis/queries/*.sql (`make docs`).

Blocks sit between `<!-- gen:NAME -->` and `<!-- /gen:NAME -->` lines
(Markdown) or `-- gen:NAME` and `-- /gen:NAME` lines (SQL), the block
indented as its opening line.  A test fails when a file differs from what
this would write, except the fault table, which is what the last test run
observed (.output/faults.json, written by tests/test_faults.py): `make
docs` after `make test` updates it.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.query_columns import SQL_BLOCKS
from runners.bench_tables import (many_cores, overhead, truth, truth_headline, truth_lenses,
                                  verdict_noise, window_cost)

if TYPE_CHECKING:
    from runfolder.records import Layout

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "analysis" / "queries").glob("*.sql"))]
FAULTS_JSON = ROOT / ".output" / "faults.json"


def usage() -> str:
    os.environ["COLUMNS"] = "80"
    from runners.command.cli import build_parser
    return "```\n" + build_parser().format_help().rstrip() + "\n```"


def exit_status() -> str:
    """trace_wal.py's exit status, the table --help ends with."""
    from runners.command.cli import EXIT_STATUS
    return "\n".join(["| status | when |", "|---|---|"]
                     + [f"| {code} | {what} |" for code, what in EXIT_STATUS])


def schema(layout: Layout) -> str:
    """Parquet columns of each file: the frames built from no records, in a
    folder written with layout."""
    import engines
    from analysis import io, sampling, sched, threadtime
    from analysis import writes as W
    from analysis.compensation import Calibration
    from runfolder import records as R
    from runfolder import files as RF
    rows = ["| file | columns |", "|---|---|"]
    with tempfile.TemporaryDirectory() as d:
        R.write_layout(d, layout.path)
        frames = {}
        for unit in engines.ENGINES:   # each engine's rows (labelled, if a log can)
            w = W.writes_frame(Path(d), Calibration(), unit.name)
            if unit.txlog_labels:
                w = W.label_transactions(w, W.read_txlog(Path(d) / "none.csv"))
            frames[f"{RF.WRITES_PARQUET} ({unit.title})"] = w
        frames |= {RF.IO_PARQUET: io.io_frame(Path(d)),
                  RF.SCHED_PARQUET: sched.sched_frame(Path(d), {}),
                  f"{RF.SAMPLES_PARQUET} (sample mode)": sampling.samples_frame(Path(d)),
                  RF.THREADS_PARQUET: threadtime.threads_frame(Path(d))}
    for name, df in frames.items():
        rows.append(f"| {name} | " + ", ".join(f"`{c}`" for c in df.columns) + " |")
    return "\n".join(rows)


def run_folder_files() -> str:
    """Every file a run folder can hold: runfolder/files.py's table."""
    from runfolder import files as RF
    rows = ["| file | written by | what |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {f.writer} | {f.holds} |" for f in RF.FILES]
    rows += ["", "Written by: " + "; ".join(f"**{w}**: {what}"
                                            for w, what in RF.WRITERS.items()) + "."]
    return "\n".join(rows)


def _where(comp: str, engine: str, layout: Layout) -> str:
    """Where the BPF side takes a component's time, from the code's tables
    (the header's, in layout), else what the unit declares (Component.where)."""
    from analysis import components, syscalls
    from collectors.symbols import resolver_module
    import engines
    unit = engines.get(engine)
    resolver = resolver_module(unit)
    specs = getattr(resolver, "PROBES", ()) or getattr(resolver, "FUNCTIONS", ())
    probes = [(s.prefix.rstrip("("), s.phase) if hasattr(s, "prefix") else (s[0], s[1])
              for s in specs]
    funcs = [f for f, ph in probes if ph != "PH_WRITE" and comp != "other"
             and layout.phase_component(ph, engine) == comp]
    if funcs:
        return "uprobes: " + ", ".join(f"`{f.split('::')[-1]}`" for f in funcs)
    io = [(kind, what) for what in ("write", "sync") for kind in layout.file_kinds().values()
          if components.io_component(what, kind, engine, layout) == comp]
    if io:
        out = []
        for what in ("write", "sync"):
            kinds = [k for k, w in io if w == what]
            if kinds:
                calls = sorted(syscalls.writes(layout) if what == "write"
                               else syscalls.syncs(layout))
                out.append(f"{'/'.join(calls)} on {', '.join(kinds)} files")
        return "; ".join(out)
    declared = (*unit.components, engines.SCHED_RUNQ, engines.OTHER)
    return next((c.where for c in declared if c.name == comp), "")


def component_table(layout: Layout) -> str:
    """component -> BPF site -> record field -> columns -> summary key ->
    figures; the components in layout's slot order."""
    from analysis import components
    from analysis.folded import frames as flame_frames
    import engines
    rows = ["| component | engine | what it holds | where the BPF side takes it | "
            "record field | writes.parquet | summary.json | phase flame graph frames |",
            "|---|---|---|---|---|---|---|---|"]
    for unit in engines.ENGINES:
        engine, prefix, frames = unit.name, unit.comp_prefix, flame_frames(unit.name)
        for c in components.names(engine, layout):
            parts = [c] if c in frames else [p for p in frames if p.startswith(c + "_")]
            if not parts and c == unit.queue:
                parts = [p for p in frames if p.startswith("queue_")]
            path = " or ".join(";".join(frames[p]) or "(root)" for p in parts)
            rows.append(
                f"| `{c}` | {engine} | {components.meaning(c, engine)} | "
                f"{_where(c, engine, layout)} | "
                f"`comp_ns[{prefix}{c.upper()}]` | `{c}_ns`, `{c}_adj_ns`, "
                f"`{c}_overhead_ns` | `components.{c}`, `components_raw.{c}` | "
                f"`{path}` |")
    return "\n".join(rows)


def faults() -> str | None:
    """The fault table as the last test run saw it; None keeps the block."""
    try:
        data = json.loads(FAULTS_JSON.read_text())
    except (OSError, ValueError):
        return None
    rows = ["| fault injected | run survived | records lost | probes left attached |",
            "|---|---|---|---|"]
    for r in data:
        rows.append(f"| {r['fault']} | {'yes' if r['survived'] else 'NO'} | "
                    f"{r['records_lost']} | {r['probes_left']} |")
    return "\n".join(rows)


def queries() -> str:
    """The named queries: name, what it answers, its file."""
    from analysis import query as Q
    rows = ["| query | what it answers |", "|---|---|"]
    rows += [f"| [`{n}`](../analysis/queries/{n}.sql) | {Q.describe(n)} |" for n in Q.names()]
    return "\n".join(rows)


def engines_table() -> str:
    """The engine registry as docs/architecture.md shows it: each unit's
    files, what a row is, its components."""
    import engines
    rows = ["| engine | a row is | unit | BPF part | components |", "|---|---|---|---|---|"]
    for e in engines.ENGINES:
        bpf = [f"`probes/{f}`" for f in (f"{e.name}.h", f"{e.name}.bpf.h")
               if (ROOT / "probes" / f).exists()] or ["`probes/walscope.h`"]
        rows.append(f"| {e.title} | one {e.row} | `engines/{e.name}/` | {', '.join(bpf)} | "
                    f"{', '.join(f'`{c}`' for c in e.component_names())} |")
    return "\n".join(rows)


BLOCKS = {"usage": usage, "exit_status": exit_status, "overhead": overhead,
          "window_cost": window_cost, "truth": truth, "truth_lenses": truth_lenses,
          "truth_headline": truth_headline,
          "many_cores": many_cores,
          "schema": schema,
          "components": component_table, "queries": queries, "faults": faults,
          "engines": engines_table, "run_folder": run_folder_files,
          "verdict_noise": verdict_noise, **SQL_BLOCKS}
MEASURED = {"faults"}   # what a test run observed, not what the code says
# read from the record layout (its argument: the build's, or the caller's)
FROM_LAYOUT = {"schema", "components"}


def block(name: str) -> re.Pattern[str]:
    """A generated block: its opening line (indentation, marker), what it
    holds (perhaps nothing), its closing line."""
    return re.compile(rf"^([ \t]*)(<!-- gen:{name} -->|-- gen:{name})\n(?:.*?\n)??"
                      rf"([ \t]*(?:<!-- /gen:{name} -->|-- /gen:{name}))$", re.S | re.M)


def render(text: str, only: set[str] | None = None,
           layout: Layout | None = None) -> str:
    """text with its generated blocks (those in only) made again; the
    layout-derived ones from layout (default: the build's)."""
    from runfolder.records import Layout
    for name, fn in BLOCKS.items():
        if only is not None and name not in only:
            continue
        pat = block(name)
        if not pat.search(text):
            continue
        new = fn(layout or Layout.build()) if name in FROM_LAYOUT else fn()
        if new is not None:
            text = pat.sub(lambda m: m.group(1) + m.group(2) + "\n" + "\n".join(
                m.group(1) + line if line else line for line in new.split("\n"))
                + "\n" + m.group(3), text)
    return text


def stale(files: list[Path] = FILES, layout: Layout | None = None) -> list[str]:
    """Files whose code-generated blocks are out of date (the layout-derived
    ones read from layout: default the build's)."""
    code = set(BLOCKS) - MEASURED
    return [str(f.relative_to(ROOT)) for f in files
            if render(f.read_text(), code, layout) != f.read_text()]


def main() -> int:
    if "--check" in sys.argv:
        bad = stale()
        for f in bad:
            print(f"{f}: generated blocks out of date: run `make docs`", file=sys.stderr)
        return 1 if bad else 0
    for f in FILES:
        new = render(f.read_text())
        if new != f.read_text():
            f.write_text(new)
            print(f"updated {f.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
