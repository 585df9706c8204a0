#!/usr/bin/env python3
"""walscope serve left on a server under a steady load: does it stay flat?

    sudo bench/soak.py [--minutes 30] [--untraced-minutes 3] [--clients 2]
                       [--max-disk 32M] [--hup-minutes 5] [-o bench/results]

A PostgreSQL cluster (runners/workloads/postgres, scale 1), started once;
pgbench runs back to back in one-minute pieces (-c CLIENTS -T 60, closed
loop): untraced for --untraced-minutes, then for --minutes under
`walscope serve -p <postmaster>` (the default budget and retention: the
last minute's p99.9 kept whole, under --max-disk, a SIGHUP every
--hup-minutes), then untraced again.  The two untraced stretches are the
A/A pair: their throughputs' ratio is this machine's drift over the soak,
the band the traced throughput is read against.  While serve runs, every
10 s: the resident memory of serve and its collector (VmRSS), the output
folder's blocks on disk, and a scrape of /metrics (events lost, rows, the
exact counts).  Before it stops, the exemplars of an OpenMetrics scrape,
each looked up in the folder it names.

Reported (soak.json, soak.md): throughput traced / untraced beside the
A/A ratio; RSS at its first steady reading (after the first minute) and
at the end, and their ratio (flat: within 10%); the run folder's growth a
minute and its most against the cap; the retained folders, and the
exemplars found in them (or in a folder the cap removed); events lost;
walscope_writes_total against pgbench's transactions and
walscope_wal_syncs_total against pg_stat_wal over the traced stretch.
Holds /tmp/walscope-heavy.lock while it runs (other heavy jobs wait).
"""
from __future__ import annotations

import argparse
import fcntl
import json
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALSCOPE = str(ROOT / ".venv" / "bin" / "walscope")
PIECE_S = 60
PROBE_S = 10
LOCK = "/tmp/walscope-heavy.lock"


def runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners.workloads.postgres", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def port_of(data: Path) -> str:
    return next(line.split("=")[1].strip() for line in
                (data / "postgresql.conf").read_text().splitlines()[::-1]
                if line.startswith("port"))


def psql(data: Path, sql: str) -> str:
    q = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", str(data), "-p",
                        port_of(data), "-At", "-c", sql, "bench"],
                       capture_output=True, text=True, timeout=60)
    if q.returncode:
        raise SystemExit(f"soak: psql: {q.stderr.strip()}")
    return q.stdout.strip()


def pgbench_cmd(data: Path, clients: int, seconds: int) -> list[str]:
    return ["runuser", "-u", "postgres", "--", "pgbench", "-h", str(data), "-p",
            port_of(data), "-n", "-c", str(clients), "-T", str(seconds), "bench"]


def tps_of(rc: int, stdout: str, stderr: str) -> float:
    """A closed-loop piece's transactions a second."""
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", stdout)
    if rc or not m:
        raise SystemExit(f"soak: pgbench: {stdout[-500:]}{stderr[-500:]}")
    return float(m.group(1))


def pgbench(data: Path, clients: int, seconds: int) -> float:
    p = subprocess.run(pgbench_cmd(data, clients, seconds), capture_output=True, text=True,
                       timeout=seconds + 120)
    return tps_of(p.returncode, p.stdout, p.stderr)


def processed(data: Path) -> int:
    return int(psql(data, "select xact_commit from pg_stat_database where datname='bench'"))


def rss_kb(pid: int) -> int:
    """VmRSS of pid and its children (serve's collector), in KiB."""
    total = 0
    pids = [pid]
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(k) for k in kids]
    except OSError:
        pass
    for p in pids:
        try:
            m = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{p}/status").read_text())
            total += int(m.group(1)) if m else 0
        except OSError:
            pass
    return total


def folder_bytes(d: Path) -> int:
    """The output folder's blocks on disk now (the spool's record files are
    sparse: their size is not their cost; a file renamed or removed
    meanwhile, as the collector's counters.json each second, is left out)."""
    total = 0
    for f in d.rglob("*"):
        try:
            total += f.stat().st_blocks * 512 if f.is_file() else 0
        except OSError:
            pass
    return total


# an exemplar's write, looked up in its folder's records (the venv has numpy)
FIND = """
import json, sys
from runfolder import records as R
for line in sys.stdin:
    folder, tid, start = json.loads(line)
    try:
        w = R.read_records(folder, "ws_write_rec")
    except (OSError, ValueError):
        print("gone"); continue
    print("found" if ((w["tid"] == int(tid)) & (w["start_ns"] == int(start))).any() else "missing")
"""


def exemplars(port: int) -> list[str]:
    """An OpenMetrics scrape's exemplars (the writes they name)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={
        "Accept": "application/openmetrics-text; version=1.0.0"})
    with urllib.request.urlopen(req, timeout=10) as r:
        text = r.read().decode()
    return re.findall(r' # \{write="([^"]+)"\}', text)


def looked_up(names: list[str], out: Path) -> dict[str, int]:
    """Each exemplar's write looked up once serve has ended (its records
    written): found in the folder it names, that folder removed by the
    cap, or missing."""
    asks = "".join(json.dumps([str(out / n.split("/")[0]), *n.split("/")[1:]]) + "\n"
                   for n in names)
    got = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", FIND], input=asks,
                         cwd=ROOT, capture_output=True, text=True).stdout.split()
    return {k: got.count(k) for k in ("found", "gone", "missing")}


def scrape(port: int) -> dict[str, float]:
    """The sums of a few families of /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{")[0].split(" ")[0]
        if name in ("walscope_writes_total", "walscope_wal_syncs_total",
                    "walscope_writes_recorded_total", "walscope_events_lost_total",
                    "walscope_rows_trusted"):
            out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def untraced(data: Path, clients: int, minutes: float) -> list[float]:
    return [pgbench(data, clients, PIECE_S) for _ in range(max(1, round(minutes)))] \
        if minutes >= 1 else [pgbench(data, clients, int(minutes * 60) or 10)]


def soak(data: Path, pid: int, clients: int, minutes: float, out: Path, max_disk: str,
         hup_minutes: float) -> dict:
    port = free_port()
    serve = subprocess.Popen([WALSCOPE, "serve", "-p", str(pid), "--listen",
                              f"127.0.0.1:{port}", "-o", str(out), "--max-disk", max_disk],
                             cwd=ROOT, stderr=subprocess.PIPE, text=True)
    said = []
    while not said or "traced: metrics at" not in said[-1]:
        said.append(serve.stderr.readline())
        if not said[-1]:
            raise SystemExit("soak: serve stopped: " + "".join(said))
    x0, syncs0 = processed(data), int(psql(data, "select wal_sync from pg_stat_wal"))
    start, probes, tps = time.monotonic(), [], []
    m0 = scrape(port)
    end = start + minutes * 60
    next_hup = start + hup_minutes * 60
    piece = min(PIECE_S, int(minutes * 60))
    while time.monotonic() < end:
        with tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e:
            bench = subprocess.Popen(pgbench_cmd(data, clients, piece), stdout=o, stderr=e,
                                     text=True)
            while bench.poll() is None:
                time.sleep(min(PROBE_S, piece))
                m = scrape(port)
                probes.append({"t_s": time.monotonic() - start, "rss_kb": rss_kb(serve.pid),
                               "folder_bytes": folder_bytes(out), **m})
                if time.monotonic() >= next_hup:
                    serve.send_signal(signal.SIGHUP)
                    next_hup += hup_minutes * 60
            o.seek(0)
            e.seek(0)
            tps.append(tps_of(bench.returncode, o.read(), e.read()))
    time.sleep(3)      # the backends' counters, the collector's next counters.json
    m1 = scrape(port)
    x1, syncs1 = processed(data), int(psql(data, "select wal_sync from pg_stat_wal"))
    named = exemplars(port)
    serve.send_signal(signal.SIGTERM)
    _, err = serve.communicate(timeout=600)
    exemplified = looked_up(named, out)
    kept = sorted(out.glob("slow-*"))
    newest = subprocess.run([WALSCOPE, "analyse", str(kept[-1])], capture_output=True,
                            text=True, cwd=ROOT) if kept else None
    steady = [p for p in probes if p["t_s"] >= 60] or probes
    return {
        "tps": tps, "probes": probes, "serve_rc": serve.returncode, "serve_err": err[-2000:],
        "rss_first_kb": steady[0]["rss_kb"], "rss_last_kb": steady[-1]["rss_kb"],
        "rss_max_kb": max(p["rss_kb"] for p in steady),
        "folder_mb_per_min": (probes[-1]["folder_bytes"] - probes[0]["folder_bytes"]) / 1e6
        / max((probes[-1]["t_s"] - probes[0]["t_s"]) / 60, 1e-9) if len(probes) > 1 else 0.0,
        "folder_max_bytes": max((p["folder_bytes"] for p in probes), default=0),
        "max_disk": max_disk, "hup_minutes": hup_minutes,
        "retained_folders": len(kept), "exemplars": exemplified,
        "serve_said": err.strip().splitlines()[-1] if err.strip() else "",
        "newest_analysed": None if newest is None else {
            "rc": newest.returncode, "first_lines": newest.stdout.splitlines()[1:3]},
        "events_lost": m1.get("walscope_events_lost_total", 0.0),
        "writes_total": m1.get("walscope_writes_total", 0.0)
        - m0.get("walscope_writes_total", 0.0),
        "wal_syncs_total": m1.get("walscope_wal_syncs_total", 0.0)
        - m0.get("walscope_wal_syncs_total", 0.0),
        "recorded": m1.get("walscope_writes_recorded_total", 0.0),
        "xact_commit": x1 - x0, "pg_wal_sync": syncs1 - syncs0,
    }


def table(r: dict) -> str:
    s = r["soak"]
    u = r["untraced_before"] + r["untraced_after"]
    ref = statistics.median(u)
    aa = statistics.median(r["untraced_after"]) / statistics.median(r["untraced_before"])
    lines = [
        "# walscope serve, soaked",
        "",
        f"PostgreSQL 15, pgbench -c {r['clients']} in {PIECE_S} s pieces; "
        f"{r['minutes']:g} min under `walscope serve -p` (the default budget) between "
        f"{r['untraced_minutes']:g} min untraced before and after "
        f"({r['date']}, commit {r['commit']}).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| throughput traced / untraced (median pieces) | "
        f"{statistics.median(s['tps']) / ref:.3f} ({len(s['tps'])} traced, {len(u)} untraced) |",
        f"| A/A: untraced after / before | {aa:.3f} |",
        f"| serve + collector RSS, first steady / last / max | {s['rss_first_kb'] / 1024:.1f} / "
        f"{s['rss_last_kb'] / 1024:.1f} / {s['rss_max_kb'] / 1024:.1f} MiB "
        f"(last / first {s['rss_last_kb'] / max(s['rss_first_kb'], 1):.3f}) |",
        f"| output folder on disk: growth, most / --max-disk | "
        f"{s['folder_mb_per_min']:.2f} MB a minute, {s['folder_max_bytes'] / 2**20:.1f} MiB / "
        f"{s['max_disk']} |",
        f"| retained folders left (SIGHUP every {s['hup_minutes']:g} min) | "
        f"{s['retained_folders']} |",
        f"| exemplars at the end: found / folder removed by the cap / missing | "
        f"{s['exemplars']['found']} / {s['exemplars']['gone']} / {s['exemplars']['missing']} |",
        f"| events lost | {s['events_lost']:.0f} |",
        f"| walscope_writes_total / pg_stat_database's commits | "
        f"{s['writes_total']:.0f} / {s['xact_commit']} |",
        f"| walscope_wal_syncs_total / pg_stat_wal's wal_sync | "
        f"{s['wal_syncs_total']:.0f} / {s['pg_wal_sync']} |",
        f"| rows recorded | {s['recorded']:.0f} |",
        "",
        "pg_stat_database counts every transaction that committed (pgbench's and "
        "the soak's own reads of the counters); walscope_writes_total those that "
        "wrote a commit record.",
        "",
        f"serve's last line: `{s['serve_said']}`",
    ]
    if s.get("newest_analysed"):
        lines += ["", "`walscope analyse` on the newest retained folder "
                  f"(exit {s['newest_analysed']['rc']}):", "```",
                  *s["newest_analysed"]["first_lines"], "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--untraced-minutes", type=float, default=3.0)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--max-disk", default="32M", help="serve's --max-disk (default 32M)")
    ap.add_argument("--hup-minutes", type=float, default=5.0,
                    help="a SIGHUP to serve this often (default 5)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args()
    if a.minutes < 0.25 or a.untraced_minutes < 0.25:
        ap.error("--minutes and --untraced-minutes must be at least 0.25")
    base = Path(tempfile.mkdtemp(prefix="walscope-soak-"))
    base.chmod(0o711)
    data = base / "data"
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            p = runner("prepare", str(data))
            if p.returncode:
                raise SystemExit(f"soak: prepare: {p.stderr[-1000:]}")
            s = runner("start", str(data))
            if s.returncode:
                raise SystemExit(f"soak: start: {s.stderr[-1000:]}")
            pid = int(s.stdout.split()[-1])
            try:
                before = untraced(data, a.clients, a.untraced_minutes)
                result = soak(data, pid, a.clients, a.minutes, base / "run", a.max_disk,
                              a.hup_minutes)
                after = untraced(data, a.clients, a.untraced_minutes)
            finally:
                runner("stop", str(data))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    r = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit,
         "minutes": a.minutes, "untraced_minutes": a.untraced_minutes, "clients": a.clients,
         "untraced_before": before, "untraced_after": after, "soak": result}
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "soak.json").write_text(json.dumps(r, indent=1) + "\n")
    (a.output / "soak.md").write_text(table(r))
    print(table(r))
    return 0 if result["serve_rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
