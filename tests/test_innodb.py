"""InnoDB as an engine unit (issue 46): a MariaDB server with InnoDB
tables, attached with -p in the default mode while a client commits 200
autocommit INSERTs.  Every commit is a row (ha_commit_trans), and there
are no more rows than the server's own Innodb_log_writes over the run
(each such commit writes and syncs ib_logfile0 once); the redo log's
syncs are the rows' log_sync_io."""
from __future__ import annotations

import json
import signal
import subprocess
import time

import pandas as pd
import pytest

from tests.conftest import TRACE, wait_attached
from tests.mariadb import server

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

INSERTS = 200


@pytest.fixture
def innodb_server(tmp_path):
    with server(tmp_path / "m", rocksdb=False) as m:
        yield m


def test_innodb_commits_of_a_server_attached_with_p(tmp_path, innodb_server):
    m = innodb_server
    m.sql("CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, "
          "v VARCHAR(40)) ENGINE=InnoDB")
    out = tmp_path / "o"
    tracer = subprocess.Popen([*TRACE, "-q", "-o", str(out), "-p", str(m.proc.pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(out, tracer)
        time.sleep(0.5)
        before = m.counters(("Innodb_log_writes",))
        script = "".join(f"INSERT INTO t VALUES ({i}, 'row {i}');\nDO SLEEP(0.003);\n"
                         for i in range(INSERTS))
        client = subprocess.run([m.client, "--no-defaults", "-S", m.sock, "-u", "root", "w"],
                                input=script, text=True, capture_output=True, timeout=300)
        assert client.returncode == 0, client.stderr
        after = m.counters(("Innodb_log_writes",))
        tracer.send_signal(signal.SIGINT)
        _, err = tracer.communicate(timeout=300)
    finally:
        if tracer.poll() is None:
            tracer.kill()
            tracer.wait()
    assert tracer.returncode == 0, err[-3000:]
    assert m.sql("SELECT count(*) FROM t", "w").strip() == str(INSERTS)
    log_writes = after["Innodb_log_writes"] - before["Innodb_log_writes"]
    s = json.loads((out / "summary.json").read_text())
    assert s["mode"] == "budget"
    w = pd.read_parquet(out / "writes.parquet")
    rows = w[w["engine"] == "innodb"] if "engine" in w else w
    assert INSERTS <= len(rows) <= log_writes, (len(rows), log_writes, s["budget"])
    # each commit synced the redo log itself (one client: no group to join)
    synced = (rows["log_sync_io_ns"] > 0).sum()
    assert synced >= INSERTS * 0.95, synced
    assert (rows["log_write_io_ns"] > 0).sum() >= INSERTS * 0.95
