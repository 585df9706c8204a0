"""The settings a prepared cluster gets, appended to its postgresql.conf:
a server nobody else can reach, whose WAL in a measured run comes from the
workload alone, and whose every commit is durable."""
from __future__ import annotations

import socket
from pathlib import Path

MARK = "# --- walscope (runners/workloads/postgres/config.py) ---"

# name -> value, in the order they are written (later lines of
# postgresql.conf win, so these override initdb's)
SETTINGS: dict[str, str] = {
    "listen_addresses": "''",          # the unix socket only ...
    # unix_socket_directories and port: per cluster (settings_for)
    "autovacuum": "off",               # no background transactions in a run
    "fsync": "on",
    "synchronous_commit": "on",        # PGOPTIONS='-c synchronous_commit=off' per run
    "full_page_writes": "on",
    # no xl_running_xacts from the bgwriter every 15 s, no standby info at
    # checkpoints: every WAL record in a run is the workload's
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "shared_buffers": "128MB",
    "max_wal_size": "4GB",             # no checkpoint forced by WAL volume
    "min_wal_size": "1GB",             # checkpoints recycle segments, never delete
    "checkpoint_timeout": "1d",        # nor by time
    "wal_writer_delay": "200ms",       # PostgreSQL's default, stated: stats.py waits on it
    "track_wal_io_timing": "on",       # pg_stat_wal wal_write_time, wal_sync_time
    "log_checkpoints": "on",
    "logging_collector": "off",        # the log is the postmaster's stderr
}


def free_port() -> int:
    """A TCP port nothing listens on now.  The server listens on no TCP
    port at all (listen_addresses ''): the number only names its socket,
    DIR/.s.PGSQL.<port>, and is what clients pass with -p."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def settings_for(data_dir: Path, port: int,
                 overrides: dict[str, str] | None = None) -> dict[str, str]:
    out = dict(SETTINGS)
    out["unix_socket_directories"] = quote(str(data_dir))
    out["port"] = str(port)
    out.update(overrides or {})
    return out


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def append(data_dir: Path, settings: dict[str, str]) -> None:
    lines = [f"{k} = {v}" for k, v in settings.items()]
    with open(data_dir / "postgresql.conf", "a") as f:
        f.write("\n" + MARK + "\n" + "\n".join(lines) + "\n")


def parse_override(text: str) -> tuple[str, str]:
    """NAME=VALUE (prepare --set) as a postgresql.conf line's parts; a
    value that is not a plain word or number is quoted."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"expected NAME=VALUE, got {text!r}")
    value = value.strip()
    plain = value.replace(".", "").replace("_", "").isalnum() or \
        (value.startswith("'") and value.endswith("'") and len(value) >= 2)
    return name.strip(), value if plain else quote(value)
