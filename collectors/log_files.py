"""--log-file GLOB: a log the user names, as the collector's rule for it
(walscope.h's struct ws_log_rule): such a file is a WAL to every engine,
and where no engine is found, the log-sync engine makes rows of its
syscalls.

A glob names a file by its basename, PREFIX*SUFFIX, PREFIX*, *SUFFIX or a
NAME, each part up to 8 bytes (the BPF side reads a path once, keeping a
basename's first and last 8 bytes), optionally under a directory: only its
own name counts (up to 8 bytes, no wildcard), so /var/lib/app/wal/*.log
names *.log files in any directory called "wal", and /x.log names x.log in
any directory.  The directory is read from the path the program opens: a
program that changes into wal/ and opens 000.log is matched by *.log, not
by wal/*.log."""
from __future__ import annotations

from dataclasses import dataclass

MAX_RULES = 4        # WS_LOG_RULES
MAX_PART = 8         # bytes of a prefix, a suffix, a directory's name
WILD = "*?[]"


class LogFileError(ValueError):
    """A glob walscope cannot follow; the message is one line for the user."""


@dataclass(frozen=True)
class LogRule:
    prefix: bytes
    suffix: bytes
    dir: bytes
    exact: bool      # the basename is prefix, whole

    def option(self) -> str:
        """As the collector's --log-files takes one: PREFIX/SUFFIX/DIR/EXACT."""
        return "/".join((self.prefix.hex(), self.suffix.hex(), self.dir.hex(),
                         "1" if self.exact else "0"))


def parse(glob: str) -> LogRule:
    """The rule for a glob, or LogFileError saying why it cannot be one."""
    head, _, name = glob.rstrip("/").rpartition("/")
    parent = head.rpartition("/")[2]
    why = None
    if not name:
        why = "no file name"
    elif any(c in head for c in WILD):
        why = "a wildcard in its directory (only the file name may have one)"
    elif len(parent.encode()) > MAX_PART:
        why = f"its directory's name is over {MAX_PART} bytes"
    elif any(c in name for c in "?[]") or name.count("*") > 1:
        why = "a file name may have one '*' and no '?' or '['"
    if why is None:
        pre, star, suf = name.partition("*")
        if len(pre.encode()) > MAX_PART or len(suf.encode()) > MAX_PART:
            why = (f"the part before or after '*' is over {MAX_PART} bytes" if star
                   else f"a NAME over {MAX_PART} bytes (give PREFIX* or *SUFFIX)")
        elif star and not pre and not suf:
            why = "'*' alone names every file"
    if why is not None:
        raise LogFileError(f"--log-file {glob}: {why}; give NAME, PREFIX*, *SUFFIX or "
                           f"PREFIX*SUFFIX (up to {MAX_PART} bytes each), optionally "
                           "under a directory")
    return LogRule(pre.encode(), suf.encode(), parent.encode(), not star)


def rules(globs: list[str]) -> list[LogRule]:
    if len(globs) > MAX_RULES:
        raise LogFileError(f"--log-file: at most {MAX_RULES} (got {len(globs)})")
    return [parse(g) for g in globs]


def option(globs: list[str]) -> str | None:
    """The collector's --log-files for these globs (None: none)."""
    return ";".join(r.option() for r in rules(globs)) or None
