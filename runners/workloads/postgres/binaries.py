"""Where PostgreSQL's programs are: $WALSCOPE_PG_BIN, else the newest
/usr/lib/postgresql/<major>/bin (Debian's layout) that has a postgres."""
from __future__ import annotations

import os
from pathlib import Path

DEBIAN_ROOT = Path("/usr/lib/postgresql")


class MissingBinaries(RuntimeError):
    """No PostgreSQL server programs here: one line."""


def bindir() -> Path:
    env = os.environ.get("WALSCOPE_PG_BIN")
    if env:
        found = [Path(env)] if (Path(env) / "postgres").exists() else []
    else:
        found = sorted((d / "bin" for d in DEBIAN_ROOT.glob("*")
                        if (d / "bin" / "postgres").exists() and d.name.isdigit()),
                       key=lambda b: int(b.parent.name))
    if not found:
        where = env or f"{DEBIAN_ROOT}/*/bin"
        raise MissingBinaries(f"no PostgreSQL server in {where} (install "
                              "postgresql, or set WALSCOPE_PG_BIN)")
    return found[-1]


def program(name: str) -> str:
    """The path of one of the server's programs (postgres, initdb, psql,
    pg_isready, pgbench), all from the same installation."""
    path = bindir() / name
    if not path.exists():
        raise MissingBinaries(f"no {name} in {path.parent}")
    return str(path)
