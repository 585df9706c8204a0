"""What earlier runs found in objects that hold no engine, kept between runs.

A process that maps an object walscope has not seen this run is stopped
until the object is read (collectors/objects.py): its symbols searched for
every engine, and for the dynamic loader's hook.  That takes 5-60 ms an
object (pyelftools; libc's symbol table is the slow one), and most objects
hold neither: a Python program meets ~9 before its main, a JVM dozens.
Their verdict is kept here, by file identity, so the next run that meets
the same file releases the process without reading it again.

Only a rejection with nothing to attach is kept (no engine's functions, no
loader hook, a readable ELF object).  An entry is the file's device, inode,
size, modification and change times: a file written since, or replaced,
misses.  The cache file is named by a fingerprint of the code that reads
objects (collectors/, engines/), the mode and whether stepped probes are
kept, so a walscope that reads objects differently starts afresh.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collectors.records import ROOT

CACHE_DIR = Path("/var/cache/walscope")   # beside the calibration (root's)
FORMAT = 1
MAX_ENTRIES = 20_000   # ~2 MB; the oldest dropped past it
# the code whose reading of an object a verdict depends on
SOURCES = ("collectors/objects.py", "collectors/symbols.py", "collectors/loader.py",
           "collectors/modes.py")


def fingerprint() -> str:
    """A digest of the sources that decide a verdict (engines/ whole)."""
    h = hashlib.sha1()
    files = [ROOT / s for s in SOURCES] + sorted((ROOT / "engines").rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode())
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()[:12]


def file_key(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


@dataclass(frozen=True)
class Verdict:
    """An object's rejection as it was read (ObjectInfo's fields)."""
    build_id: str | None
    symbols: str | None
    why: str


class ObjectCache:
    """The verdicts of one mode, loaded at start and written back at close
    (merged with what runs beside this one wrote meanwhile)."""

    def __init__(self, mode_name: str, keep_stepped: bool, folder: Path = CACHE_DIR):
        kind = f"{mode_name}{'-stepped' if keep_stepped else ''}"
        self.path = folder / f"objects-v{FORMAT}-{kind}-{fingerprint()}.json"
        # the same mode's files of other versions (or walscopes), dropped at save
        self._others = re.compile(rf"objects-v\d+-{re.escape(kind)}-[0-9a-f]{{12}}\.json")
        self._known: dict[str, dict[str, Any]] = self._read()
        self._added: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()   # the follower's thread adds, close() saves
        self.hits = 0

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def lookup(self, read_path: str) -> Verdict | None:
        """The verdict kept for this file, or None (not kept, or not there)."""
        try:
            v = self._known.get(file_key(os.stat(read_path)))
        except OSError:
            return None
        if not isinstance(v, dict) or not isinstance(v.get("why"), str):
            return None
        self.hits += 1
        return Verdict(v.get("build_id"), v.get("symbols"), v["why"])

    def add(self, read_path: str, verdict: Verdict) -> None:
        try:
            key = file_key(os.stat(read_path))
        except OSError:
            return
        entry = {"build_id": verdict.build_id, "symbols": verdict.symbols,
                 "why": verdict.why}
        with self._lock:
            self._known[key] = self._added[key] = entry

    def save(self) -> None:
        """Write what this run added; quietly nothing where the folder is
        not ours to write (a run as an ordinary user)."""
        with self._lock:
            added = dict(self._added)
            self._added.clear()
        if not added:
            return
        merged = {**self._read(), **added}
        if len(merged) > MAX_ENTRIES:   # insertion order: the oldest first
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(merged))
            tmp.replace(self.path)
            for old in self.path.parent.iterdir():
                if old != self.path and self._others.fullmatch(old.name):
                    old.unlink(missing_ok=True)
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:   # the folder is no folder
                pass
