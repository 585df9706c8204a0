"""SQLite: a row is one transaction (BEGIN ... COMMIT, or one autocommit
statement that wrote)."""
from __future__ import annotations

from typing import Any

from engines.base import Component, Engine, IoSum, Section

# the rollback journal and the WAL file alike
LOG_KINDS = ("journal", "wal")


def io_component(io: str, kind: str) -> str | None:
    """probes/sqlite.bpf.h's sqlite_sys_comp: the journal or WAL, the
    database, the directory."""
    if kind in ("journal", "wal"):
        return f"journal_{io}_io"
    if kind == "db":
        return f"db_{io}_io"
    return "dir_sync_io" if kind == "dir" and io == "sync" else None


def section(t: dict[str, Any]) -> dict[str, Any]:
    """summary.json's "sqlite": its file I/O, and the transactions by kind."""
    explicit = t["flags"]["explicit"]
    return {**t["io"], "checkpoints": t["rows_with"]["checkpoint"],
            "explicit": explicit, "autocommit": t["rows"] - explicit,
            "rollbacks": t["flags"]["rollback"], "statements": t["calls"]}


def lines(summary: dict[str, Any]) -> list[str]:
    sq = summary["sqlite"]
    return [f"transactions: {sq['explicit']} BEGIN..COMMIT, {sq['autocommit']} "
            f"autocommit, {sq['rollbacks']} rolled back; journal: "
            f"{sq['journal_sync']['count']} syncs, {sq['journal_write']['count']} writes, "
            f"{sq['journal_unlink']['count']} unlinks; db: {sq['db_sync']['count']} "
            f"syncs; dir: {sq['dir_sync']['count']} syncs; "
            f"{sq['checkpoints']} with a checkpoint"]


SECTION = Section(
    io_sums=(
        ("journal_write", IoSum("write", LOG_KINDS, True)),
        ("journal_sync", IoSum("sync", LOG_KINDS, True)),
        ("db_write", IoSum("write", ("db", "other"), True)),
        ("db_sync", IoSum("sync", ("db", "other"), True)),
        ("dir_sync", IoSum("sync", ("dir",), True)),
        ("journal_unlink", IoSum(("unlink", "unlinkat"), ("journal",), True)),
        ("journal_truncate", IoSum(("ftruncate",), LOG_KINDS, True)),
        ("journal_open", IoSum(("openat",), ("journal",), True)),
    ),
    rows_with=("checkpoint",),
    build=section,
    lines=lines,
)

ENGINE = Engine(
    order=20,
    imports=("sqlite3_",),
    name="sqlite", title="SQLite", ws_engine="WS_ENGINE_SQLITE",
    comp_enum="ws_sqlite_comp", comp_prefix="SC_", phase_enum="ws_sqlite_phase",
    row="transaction", mark=b"SQLite format 3",
    components=(
        Component("journal_sync_io", "#d62728", "fsync/fdatasync of the -journal or -wal file"),
        Component("journal_write_io", "#ff7f0e", "writes to the -journal or -wal file"),
        Component("db_sync_io", "#843c39", "fsync/fdatasync of the database file"),
        Component("db_write_io", "#e7969c", "writes to the database file"),
        Component("dir_sync_io", "#7b4173",
                  "directory open/fsync/close (DELETE mode makes the journal durable)"),
        Component("journal_lifecycle", "#bcbd22", "open/close/unlink/ftruncate of the journal",
                  "openat/close/unlink/ftruncate of journal files"),
        Component("checkpoint", "#17becf", "a WAL checkpoint inside the transaction, all of its I/O"),
        Component("lock_wait", "#9467bd", "fcntl/flock locks and the busy handler's sleeps",
                  "fcntl/flock, nanosleep in a transaction"),
        Component("sql_exec", "#2ca02c", "inside sqlite3_step, not in a traced syscall"),
    ),
    io_component=io_component,
    resolver="engines.sqlite.resolve",
    flag_columns=(("explicit", "explicit"), ("rollback", "rollback")),
    styles=("explicit", "BEGIN..COMMIT", "autocommit"),
    calls_column="statements",
    pair_cost="sql_pair",
    flame_root="transaction",
    flame_group="label",
    frames=(
        ("other", ("[application]",)),
        ("sql_exec", ("sqlite3_step",)),
        ("journal_write_io", ("sqlite3_step", "write", "[journal]")),
        ("journal_sync_io", ("sqlite3_step", "fdatasync", "[journal]")),
        ("db_write_io", ("sqlite3_step", "write", "[db]")),
        ("db_sync_io", ("sqlite3_step", "fdatasync", "[db]")),
        ("dir_sync_io", ("sqlite3_step", "fsync", "[directory]")),
        ("journal_lifecycle", ("sqlite3_step", "open/unlink/truncate", "[journal]")),
        ("checkpoint", ("sqlite3_step", "sqlite3WalCheckpoint")),
        ("lock_wait", ("sqlite3_step", "[locks and busy waits]")),
        ("sched_runq", ("[runnable]",)),
    ),
    wal_io=False,
    section=SECTION,
    txlog_labels=True,
    log_kinds=LOG_KINDS,
    # SQLite's code, named or not
    sample_rules=(("sqlite3", "sql_exec"), ("[libsqlite3", "sql_exec")),
)
