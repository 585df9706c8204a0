"""prepare DIR: a new cluster, loaded by pgbench -i and left so that a
measured run starts clean: vacuumed and analysed (no pruning or hint-bit
work left for the run), checkpointed (no dirty buffer from the load), on
a fresh WAL segment (pg_switch_wal, then a checkpoint that recycles the
old segments as the next ones: no segment is created inside a short run),
then shut down cleanly."""
from __future__ import annotations

import os
from pathlib import Path

from runners.workloads.postgres import cluster, config, owner as owners, pgbench
from runners.workloads.postgres.session import Session

SETTLE_SQL = ("vacuum analyze", "checkpoint", "select pg_switch_wal()", "checkpoint")


def new_folder(data_dir: Path, owner: owners.Owner) -> None:
    """DIR made (or found empty), the owner's, mode 0700."""
    if data_dir.exists() and (not data_dir.is_dir() or any(data_dir.iterdir())):
        raise cluster.ClusterError(f"{data_dir}: exists and is not an empty folder")
    data_dir.mkdir(parents=True, exist_ok=True)
    if owner.is_other:
        os.chown(data_dir, owner.uid, owner.gid)
    data_dir.chmod(0o700)


def prepare(data_dir: Path, scale: int, overrides: dict[str, str]) -> str:
    """The one line that says what was made."""
    data_dir = data_dir.absolute()
    owner = owners.for_new_cluster()
    if len(str(data_dir)) > cluster.MAX_DIR_CHARS:
        raise cluster.ClusterError(f"{data_dir}: too long a path for the socket in it "
                                   f"(at most {cluster.MAX_DIR_CHARS} characters)")
    new_folder(data_dir, owner)
    cluster.check_reachable(owner, data_dir)
    cluster.initdb(data_dir, owner)
    port = config.free_port()
    config.append(data_dir, config.settings_for(data_dir, port, overrides))
    proc = cluster.start(data_dir, owner)
    try:
        cluster.wait_ready(proc, data_dir, port, owner)
        with Session(data_dir, port, owner) as s:
            s.query(f"create database {pgbench.DATABASE}")
            version = s.query("show server_version")[0][0]
        p = pgbench.initialize(data_dir, port, owner, scale)
        if p.returncode != 0:
            raise cluster.ClusterError("pgbench -i failed: " +
                                       cluster.last_line(p.stderr or p.stdout))
        with Session(data_dir, port, owner, pgbench.DATABASE) as s:
            for sql in SETTLE_SQL:
                s.query(sql, timeout=600)
            walfile = s.query("select pg_walfile_name(pg_current_wal_insert_lsn())")[0][0]
    finally:
        code = cluster.stop(proc)
    if code != 0:
        raise cluster.ClusterError(f"postgres exited {code} at shutdown: "
                                   f"{cluster.log_tail(data_dir)}")
    return (f"prepared {data_dir}: PostgreSQL {version}, pgbench scale {scale}, "
            f"owner {owner.name}, port {port}, WAL at {walfile}")
