"""walscope diff: the table (80 columns), the JSON, and the differential
flame graph of two runs (analysis/diff.py computes them).

The flame graph is inferno's differential one (inferno-diff-folded, then
inferno-flamegraph) of the two runs' folded stacks scaled to nanoseconds
per recorded write, so runs with different numbers of writes compare:
frames are as wide as in B, red where B spends more per write than A, blue
where it spends less.
"""
from __future__ import annotations

import html
import json
import math
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import engines
from analysis.diff import DiffError
from analysis.table import fmt_ns
from viz import flamegraph
from viz.flameframe import flame_frame

KINDS = ("phase", "offcpu", "offcpu-stacks")


def signed(ns: float) -> str:
    if ns != ns:
        return "-"
    if abs(ns) < 0.5:
        return "0ns"
    return ("+" if ns > 0 else "-") + fmt_ns(abs(ns))


def span(lo: float, hi: float) -> str:
    if lo != lo or hi != hi:
        return "no interval"
    return f"[{signed(lo)}, {signed(hi)}]"


def fmt_bytes(b: float) -> str:
    if b >= 1 << 20:
        return f"{b / (1 << 20):.1f}MiB"
    if b >= 1 << 10:
        return f"{b / (1 << 10):.1f}KiB"
    return f"{b:.0f}B"


def rate(v: float) -> str:
    """A count per write, 7 characters at most."""
    if v == 0:
        return "0"
    return f"{v:.2f}" if v >= 0.01 else f"{v:.1e}"


def rows_of(engine: str) -> str:
    """What the engine's rows are, for the table's words: "write" (RocksDB),
    "transaction" (SQLite, PostgreSQL)."""
    try:
        return engines.get(engine).row
    except KeyError:
        return "write"


def run_line(tag: str, r: dict[str, Any], width: int = 80, row: str = "write") -> str:
    """Which run, how it was recorded, and what its intervals resample;
    a long path loses its beginning."""
    if r["unit"] == "windows":
        n = r["windows_with_writes"]
        wins = f"{n} window{'s' if n != 1 else ''}"
        how = wins if r["interval"] else f"{wins}: too few for an interval"
    else:
        how = f"every {row}" if r.get("every_write") else f"{row}s"
    tail = f" ({r['mode']}, {r['writes']} {row}s; {how})"
    room = max(width - len(tag) - 2 - len(tail), 12)
    path = r["path"] if len(r["path"]) <= room else "..." + r["path"][-(room - 3):]
    return f"{tag}: {path}{tail}"


def component_rows(rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Table lines for the components with time in either run, by |delta|;
    and the names of those with none."""
    lines, zero = [], []
    for r in sorted(rows, key=lambda r: -abs(r["delta_ns"])):
        if r["a_ns"] == 0 and r["b_ns"] == 0:
            zero.append(r["component"])
            continue
        lines.append(f"{r['component']:<18}{fmt_ns(r['a_ns']):>10}{fmt_ns(r['b_ns']):>10}"
                     f"{signed(r['delta_ns']):>11}  {span(r['lo_ns'], r['hi_ns'])}")
    return lines, zero


def answer_of(h: dict[str, Any]) -> str:
    if not h.get("lens"):
        return "none"
    lens = "rows" if h["lens"] == "rows" else "untouched lens"
    return f"{fmt_ns(h['mean_ns'])} ({lens}" + ("" if h.get("trusted") else ", NOT trusted") + ")"


def answer_lines(a: dict[str, Any], row: str) -> list[str]:
    """Each run's headline and their difference, before the rows' decomposition."""
    lines = [f"answer (each run's headline mean {row}):",
             f"  A {answer_of(a['A'])}", f"  B {answer_of(a['B'])}",
             f"  B-A {signed(a['delta_ns'])}"
             + ("" if a["same_lens"] else "; from different lenses: compare with care")]
    if a["A"].get("lens") == "untouched" or a["B"].get("lens") == "untouched":
        lines.append("  by component: " + ", ".join(
            f"{c['component']} {signed(c['delta_ns'])}" for c in a["components"][:3]))
        lines.append("  (the rows below are what the probes saw)")
    return lines


def format_table(d: dict[str, Any]) -> str:
    """The diff as text, 80 columns."""
    ra, rb = d["runs"]["A"], d["runs"]["B"]
    unit = {r["unit"] for r in (ra, rb)}
    over = " and ".join(sorted(unit))
    row = rows_of(d["engine"])
    lines = [run_line("A", ra, row=row), run_line("B", rb, row=row), ""]
    if "answers" in d:
        lines += answer_lines(d["answers"], row) + [""]
    head = f"{'':<18}{'A':>10}{'B':>10}{'B-A':>11}  95% interval (over {over})"
    m = d["mean"]
    lines.append(f"mean {row} latency, compensated ({d['engine']}), by component")
    lines.append(head)
    rows, zero = component_rows(m["components"])
    lines += rows
    total = engines.get(d["engine"]).total_label
    lines.append(f"{total:<18}{fmt_ns(m['a_ns']):>10}{fmt_ns(m['b_ns']):>10}"
                 f"{signed(m['delta_ns']):>11}  {span(m['lo_ns'], m['hi_ns'])}")
    lines.append(f"{'residual (B-A minus the sum)':<38}{signed(m['residual_ns']):>11}")
    p = d["p99"]
    lines.append("")
    lines.append(f"p99, by the {row}s ranked around it (p{(d['quantile'] - d['band']) * 100:g}"
                 f"-p{(d['quantile'] + d['band']) * 100:g}, >=3 a side): "
                 f"{ra['band_writes']} in A, {rb['band_writes']} in B")
    lines.append(head)
    rows, zero99 = component_rows(p["components"])
    lines += rows
    lines.append(f"{'band mean':<18}{fmt_ns(p['band_a_ns']):>10}{fmt_ns(p['band_b_ns']):>10}"
                 f"{signed(p['components_sum_ns']):>11}")
    lines.append(f"{'p99':<18}{fmt_ns(p['a_ns']):>10}{fmt_ns(p['b_ns']):>10}"
                 f"{signed(p['delta_ns']):>11}  {span(p['lo_ns'], p['hi_ns'])}")
    lines.append(f"{'residual (p99 minus band mean)':<38}{signed(p['residual_ns']):>11}  "
                 f"{span(p['residual_lo_ns'], p['residual_hi_ns'])}")
    both_zero = sorted(set(zero) & set(zero99))
    if both_zero:
        lines.append("no time in either run: " + ", ".join(both_zero))
    lines.append("")
    lines += io_lines(d["io"]["A"], d["io"]["B"], row)
    return "\n".join(lines)


def log_bytes_label(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The log's bytes by the file they went to: "WAL bytes" (RocksDB,
    SQLite in WAL mode), "journal bytes" (SQLite in DELETE mode), "journal
    / WAL bytes" where A's and B's differ."""
    a_kind, b_kind = ({"wal": "WAL"}.get(k, k) for k in (a.get("log_kind") or "wal",
                                                        b.get("log_kind") or "wal"))
    return f"{a_kind} bytes" if a_kind == b_kind else f"{a_kind} / {b_kind} bytes"


def io_lines(a: dict[str, Any], b: dict[str, Any], row: str = "write") -> list[str]:
    """The I/O per row of both runs, side by side."""
    lines = [f"{f'I/O per {row}':<28}{'A':>12}{'B':>12}"]
    # the labels keep their columns: "txn", as in "txn (total)"
    short = "txn" if row == "transaction" else row

    def line(label: str, key: str, fmt=rate) -> None:
        va, vb = a.get(key), b.get(key)
        if va is None and vb is None:
            return
        lines.append(f"{label:<28}{fmt(va) if va is not None else '-':>12}"
                     f"{fmt(vb) if vb is not None else '-':>12}")

    line(f"traced syscalls in a {short}", "syscalls")
    line("untraced syscalls", "untraced_syscalls")
    line("WAL syncs" if "wal_writes" in a or "wal_writes" in b else "syncs", "syncs")
    line("WAL writes", "wal_writes")
    line(log_bytes_label(a, b), "wal_bytes", fmt_bytes)
    kinds = sorted({(k["in_write"], k["kind"]) for k in a["by_kind"] + b["by_kind"]},
                   key=lambda t: (not t[0], t[1]))
    if not kinds:
        missing = [t for t, x in (("A", a), ("B", b)) if not x["io_parquet"]]
        if missing:
            lines.append(f"by file kind: no io.parquet in {' and '.join(missing)}")
        return lines
    lines.append(f"{f'per {short}, by file':<20}{'calls':>8}{'syncs':>8}{'bytes':>9}  |"
                 f"{'calls':>8}{'syncs':>8}{'bytes':>9}")
    for inw, kind in kinds:
        cells = []
        for x in (a, b):
            k = next((k for k in x["by_kind"] if (k["in_write"], k["kind"]) == (inw, kind)),
                     None)
            cells.append(f"{rate(k['calls']):>8}{rate(k['syncs']):>8}{fmt_bytes(k['bytes']):>9}"
                         if k else f"{'-':>8}{'-':>8}{'-':>9}")
        label = f"{kind} ({f'in {short}s' if inw else 'outside'})"
        lines.append(f"{label:<20}{cells[0]}  |{cells[1]}")
    return lines


def html_section(d: dict[str, Any]) -> str:
    """The diff for report.html: which runs, the mean and the p99 by
    component with their intervals and residuals, the I/O per write."""
    import html as h
    ra, rb = d["runs"]["A"], d["runs"]["B"]

    def table(rows: list[dict[str, Any]], total: tuple[str, float, float, float, str],
              residual: tuple[str, float, str]) -> str:
        body = "".join(
            f"<tr><td>{h.escape(r['component'])}</td><td>{fmt_ns(r['a_ns'])}</td>"
            f"<td>{fmt_ns(r['b_ns'])}</td><td>{signed(r['delta_ns'])}</td>"
            f"<td>{span(r['lo_ns'], r['hi_ns'])}</td></tr>"
            for r in sorted(rows, key=lambda r: -abs(r["delta_ns"]))
            if r["a_ns"] or r["b_ns"])
        name, a, b, delta, iv = total
        body += (f"<tr><th>{name}</th><th>{fmt_ns(a)}</th><th>{fmt_ns(b)}</th>"
                 f"<th>{signed(delta)}</th><th>{iv}</th></tr>")
        body += (f"<tr><td colspan=3>{residual[0]}</td><td>{signed(residual[1])}</td>"
                 f"<td>{residual[2]}</td></tr>")
        return ("<table><tr><th>component</th><th>A</th><th>B</th><th>B - A</th>"
                "<th>95% interval</th></tr>" + body + "</table>")

    m, p = d["mean"], d["p99"]
    row = rows_of(d["engine"])
    runs = "".join(f"<li>{h.escape(run_line(t, r, 200, row))}</li>"
                   for t, r in (("A", ra), ("B", rb)))
    ans = "<pre>" + h.escape("\n".join(answer_lines(d["answers"], row))) + "</pre>" \
        if "answers" in d else ""
    return (f"<ul>{runs}</ul>{ans}<h3>Mean {row} latency (compensated)</h3>"
            + table(m["components"], ("mean", m["a_ns"], m["b_ns"], m["delta_ns"],
                                      span(m["lo_ns"], m["hi_ns"])),
                    ("residual (B - A less the sum)", m["residual_ns"], ""))
            + f"<h3>p99, by the {row}s ranked around it (p{(d['quantile'] - d['band']) * 100:g}"
            f"-p{(d['quantile'] + d['band']) * 100:g})</h3>"
            + table(p["components"], ("p99", p["a_ns"], p["b_ns"], p["delta_ns"],
                                     span(p["lo_ns"], p["hi_ns"])),
                    ("residual (p99 less the band mean)", p["residual_ns"],
                     span(p["residual_lo_ns"], p["residual_hi_ns"])))
            + "<h3>I/O per write</h3><pre>"
            + h.escape("\n".join(io_lines(d["io"]["A"], d["io"]["B"], row))) + "</pre>")


def to_json(d: dict[str, Any]) -> str:
    """The diff as JSON (NaN, an interval there is none of, as null)."""
    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(d), indent=1) + "\n"


# -- the differential flame graph ---------------------------------------

def per_write(folded: Path, writes: int, out: Path) -> Path:
    """A folded file in microseconds scaled to nanoseconds per write
    (stacks under 1 ns a write are left out)."""
    lines = []
    for line in folded.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        try:
            v = round(float(count) * 1000 / max(writes, 1))
        except ValueError:
            continue
        if stack and v > 0:
            lines.append(f"{stack} {v}")
    out.write_text("\n".join(lines) + "\n")
    return out


def folded_of(run: Path, kind: str) -> Path:
    f = flamegraph.folded_files(run).get(kind)
    if not f:
        raise DiffError(f"{run}: no {kind}.folded for the flame graph "
                        "(walscope analyse it, or pick another --kind)")
    return f


def flame_titles(a: str, b: str, kind: str, widths: str) -> tuple[str, str]:
    """The differential flame graph's title (which runs) and subtitle (how
    to read it), short enough to stand whole above a frame's width."""
    return (f"{kind}, ns per write: {b} vs {a}",
            f"widths of {b if widths == 'B' else a}; red: more in {b}, blue: less")


def render_flame(a: Path, b: Path, na: int, nb: int, svg: Path, kind: str = "phase",
                 widths: str = "B") -> tuple[Path, Path]:
    """The differential flame graph of the runs' <kind>.folded, per write,
    frames as wide as in B (or A: what B lost entirely shows there), red
    where B spends more; returns (svg, the differential folded file beside
    it: stack, A's ns/write, B's, or the other way round for widths A)."""
    fa, fb = folded_of(a, kind), folded_of(b, kind)
    diff = svg.with_suffix(".folded")
    with tempfile.TemporaryDirectory() as tmp:
        sa = per_write(fa, na, Path(tmp) / "a.folded")
        sb = per_write(fb, nb, Path(tmp) / "b.folded")
        first, second = (sa, sb) if widths == "B" else (sb, sa)
        with open(diff, "w") as dst:
            p = subprocess.run([flamegraph.inferno("inferno-diff-folded"), str(first),
                                str(second)], stdout=dst, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise flamegraph.RenderError(f"inferno-diff-folded failed: {p.stderr.strip()}")
    title, subtitle = flame_titles(a.name, b.name, kind, widths)
    with open(diff) as src, open(svg, "w") as dst:
        p = subprocess.run([flamegraph.inferno("inferno-flamegraph"), "--title", title,
                            "--subtitle", subtitle, "--countname", "ns/write"]
                           + (["--negate"] if widths == "A" else []),
                           stdin=src, stdout=dst, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise flamegraph.RenderError(f"inferno-flamegraph failed on {diff}: {p.stderr.strip()}")
    return svg, diff


def page(table: str, svgs: list[tuple[Path, str]]) -> str:
    """One self-contained page: the table, then each flame graph across
    the page's whole width (beside the table they had what it left, about
    half, and lost their titles' ends)."""
    flames = "".join(flame_frame(svg.read_text(errors="replace"), t) for svg, t in svgs)
    title = svgs[0][1] if svgs else "walscope diff"
    return ('<!DOCTYPE html><html><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>"
            "body{font-family:sans-serif;margin:1em}pre{font-size:12px;overflow-x:auto}"
            "iframe.flame{display:block;width:100%;border:1px solid #ccc;"
            "box-sizing:border-box;margin:0 0 1em}</style></head><body>"
            f"<pre>{html.escape(table)}</pre>{flames}</body></html>\n")


def write_outputs(d: dict[str, Any], table: str, a: Path, b: Path, out: Path,
                  kind: str = "phase") -> list[Path]:
    """-o: FILE.svg (the flame graph, B's widths), FILE.html (the table
    beside the flame graphs with B's and A's widths, their SVGs beside
    it), or a folder (diff.txt, diff.json, diff.html, diff-<kind>.svg and
    diff-<kind>-a.svg)."""
    na, nb = d["runs"]["A"]["writes"], d["runs"]["B"]["writes"]
    if out.suffix == ".svg":
        return list(render_flame(a, b, na, nb, out, kind))
    if out.suffix == ".html":
        stem = out.with_suffix("")
    else:
        out.mkdir(parents=True, exist_ok=True)
        stem = out / f"diff-{kind}"
    made: list[Path] = []
    svgs = []
    for widths, suffix in (("B", ""), ("A", "-a")):
        svg, folded = render_flame(a, b, na, nb, Path(f"{stem}{suffix}.svg"), kind, widths)
        made += [svg, folded]
        svgs.append((svg, f"{kind}: {b.name} vs {a.name}, widths of "
                     f"{b.name if widths == 'B' else a.name}"))
    if out.suffix == ".html":
        out.write_text(page(table, svgs))
        return [out] + made
    (out / "diff.txt").write_text(table + "\n")
    (out / "diff.json").write_text(to_json(d))
    (out / "diff.html").write_text(page(table, svgs))
    return [out / "diff.txt", out / "diff.json", out / "diff.html"] + made
