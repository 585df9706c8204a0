"""What earlier runs found in objects that hold no engine, kept between runs.

A process that maps an object walscope has not seen this run is stopped
until the object is read (collectors/objects.py): its symbols searched for
every engine, and for the dynamic loader's hook.  That takes 5-60 ms an
object (pyelftools; libc's symbol table is the slow one), and most objects
hold neither: a Python program meets ~9 before its main, a JVM dozens.
Their verdict is kept here, by file identity, so the next run that meets
the same file releases the process without reading it again.

Only a rejection with nothing to attach is kept (no engine's functions, no
loader hook, symbol tables that read whole).  An entry is the file's
device, inode, size, modification and change times, taken before the read
and checked after it; a file changed within RACY_NS of its read is not
kept (a same-size rewrite inside one timestamp tick keeps its key).  A
file written since, or replaced, misses.  The cache file is named by a
fingerprint of the code and tools that read objects, the mode and whether
stepped probes are kept, so a walscope that reads objects differently
starts afresh.  The folder is trusted only when it is a directory of the
effective user's that no one else may write.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import elftools
import numpy as np

from collectors.calibration import CACHE_DIR   # beside the calibration (root's)
from runfolder.records import ROOT

FORMAT = 1
MAX_ENTRIES = 20_000   # ~2 MB; the least recently met dropped past it
MAX_BYTES = 8 << 20    # a larger file is not ours: not read
RACY_NS = 2_000_000_000
STALE_S = 7 * 86400    # other versions' files, unused this long, are dropped
# the code whose reading of an object a verdict depends on
SOURCES = ("collectors/objects.py", "collectors/symbols.py", "collectors/loader.py",
           "collectors/object_cache.py", *(f"probepoints/{m}.py" for m in (
               "modes", "points", "elf", "usdt")))


def fingerprint() -> str:
    """A digest of the sources that decide a verdict (engines/ whole), the
    libraries that parse objects and the demangler RocksDB is matched by."""
    h = hashlib.sha1()
    files = [ROOT / s for s in SOURCES] + sorted((ROOT / "engines").rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode())
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"?")
    h.update(f"{sys.version}|{elftools.__version__}|{np.__version__}".encode())
    tool = shutil.which("c++filt")
    if tool:
        st = os.stat(tool)
        h.update(f"{os.path.realpath(tool)}|{file_key(st)}".encode())
    return h.hexdigest()[:12]


def file_key(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def stat_of(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def trusted_folder(folder: Path) -> bool:
    """A directory of the effective user's that no one else may write."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and \
        not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


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
        self.folder = folder
        self.path = folder / f"objects-v{FORMAT}-{kind}-{fingerprint()}.json"
        # the same mode's files of other versions (or walscopes)
        self._other_versions = re.compile(
            rf"objects-v\d+-{re.escape(kind)}-[0-9a-f]{{12}}\.json")
        self._known: dict[str, dict[str, Any]] = self._load()
        self._added: dict[str, dict[str, Any]] = {}   # new, or met again
        self._lock = threading.Lock()   # the follower's thread adds, close() saves
        self.hits = 0

    def _load(self) -> dict[str, dict[str, Any]]:
        """The file's entries; none unless it is a regular file of ours, in
        a trusted folder, of a sane size, parsed whole."""
        if not trusted_folder(self.folder):
            return {}
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return {}
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or \
                    st.st_size > MAX_BYTES:
                return {}
            try:
                data = json.loads(f.read(MAX_BYTES))
            except (OSError, ValueError):
                return {}
        return data if isinstance(data, dict) else {}

    def lookup(self, read_path: str) -> Verdict | None:
        """The verdict kept for this file, or None (not kept, or not there)."""
        st = stat_of(read_path)
        v = self._known.get(file_key(st)) if st else None
        if not isinstance(v, dict) or not isinstance(v.get("why"), str):
            return None
        self.hits += 1
        with self._lock:   # met again: kept longest
            self._added[file_key(st)] = v
        return Verdict(v.get("build_id"), v.get("symbols"), v["why"])

    def add(self, read_path: str, before: os.stat_result | None, verdict: Verdict) -> None:
        """Keep verdict for the file as it was stat'ed before its read, if
        it is still that file and has not changed for RACY_NS."""
        after = stat_of(read_path)
        if before is None or after is None or file_key(before) != file_key(after) \
                or time.time_ns() - after.st_ctime_ns < RACY_NS or after.st_nlink == 0:
            return
        entry = {"build_id": verdict.build_id, "symbols": verdict.symbols,
                 "why": verdict.why}
        with self._lock:
            self._known[file_key(after)] = self._added[file_key(after)] = entry

    def save(self) -> None:
        """Write what this run added or met; quietly nothing where the
        folder is not ours to write (an ordinary user's run, a disk full)."""
        with self._lock:
            added = dict(self._added)
            self._added.clear()
        if not added:
            return
        try:
            self.folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        except OSError:
            return
        if not trusted_folder(self.folder):
            return
        merged = self._load()
        for key in added:   # met again: moved to the end, the last dropped
            merged.pop(key, None)
        merged.update(added)
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".objects-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(merged, f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return
        self._drop_stale_versions()

    def _drop_stale_versions(self) -> None:
        now = time.time()
        try:
            for old in self.folder.iterdir():
                if old != self.path and self._other_versions.fullmatch(old.name) \
                        and now - old.lstat().st_mtime > STALE_S:
                    old.unlink(missing_ok=True)
        except OSError:
            pass
