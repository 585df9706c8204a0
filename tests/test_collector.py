"""walscope-collect on its own: strict options, a reply for every command,
and every error printed and in its exit status."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.root   # the build, and root to load BPF
COLLECT = str(ROOT / ".output" / "walscope-collect")


def collect(args: list[str], stdin: str = "", timeout: float = 120
            ) -> subprocess.CompletedProcess:
    return subprocess.run([COLLECT, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("args,message", [
    (["-o", "/tmp", "--sample-hz", "12x"], "--sample-hz: expected a whole number"),
    (["-o", "/tmp", "--sample-hz", "-1"], "--sample-hz: expected a whole number"),
    (["-o", "/tmp", "--ringbuf-kb", "12"], "power of two"),
    (["-o", "/tmp", "--cpu-types", "PX"], "--cpu-types: one letter"),
    (["-o", "/tmp", "--offcpu-stack-every", "0"], "from 1 to"),
    (["--sample-hz", "9"], "-o DIR is required"),
    (["-o", "/tmp", "extra"], "unexpected argument"),
])
def test_bad_options_are_usage_errors(args, message):
    p = collect(args)
    assert p.returncode == 2 and message in p.stderr


def test_every_command_gets_one_reply(tmp_path):
    me = subprocess.Popen(["sleep", "60"])
    try:
        p = collect(["-o", str(tmp_path)], f"pid abc\nfrob\npid 0\npid {me.pid}\nquit\n")
    finally:
        me.kill()
        me.wait()
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "ready", "err pid abc: not a process id", "err unknown command 'frob'",
        "err pid 0: not a process id", f"ok pid {me.pid}", "ok quit"]
    rep = json.loads((tmp_path / "collector.json").read_text())
    assert rep["write_error"] == 0 and rep["poll_error"] == 0
    assert rep["records"]["tasks.bin"] >= 1    # the baseline of the traced sleep


def test_a_bad_attach_line_fails_the_start(tmp_path):
    f = tmp_path / "attach.tsv"
    f.write_text("enter\t0\t4096\t/bin/true\tmain\nsideways\tx\n")
    p = collect(["-o", str(tmp_path), "--attach", str(f)], "quit\n")
    assert p.returncode == 1 and "ready" not in p.stdout
    assert f"{f}:2: not an attach line" in p.stderr


def test_a_failed_attach_command_leaves_none_of_its_probes(tmp_path):
    """"attach FILE" whose second line is bad fails whole: its first line's
    probe is neither attached nor reported as attached (collector.json)."""
    bad = tmp_path / "bad.tsv"
    bad.write_text("enter\t0\t4096\t/bin/true\tmain\nsideways\tx\n")
    good = tmp_path / "good.tsv"
    good.write_text("enter\t0\t1\t/nonexistent/lib.so\tg\n")
    p = collect(["-o", str(tmp_path)], f"attach {bad}\nattach {good}\nquit\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1].startswith(f"err attach {bad}")
    assert p.stdout.splitlines()[2] == "ok attach 0 1"
    rep = json.loads((tmp_path / "collector.json").read_text())
    assert [a["probe"] for a in rep["attach"]] == ["enter g"]


def test_probe_names_are_escaped_in_its_report(tmp_path):
    """A probe it cannot attach is reported, and its name (any bytes a
    demangled C++ name holds) stays valid JSON."""
    f = tmp_path / "attach.tsv"
    f.write_text('enter\t0\t1\t/nonexistent/lib.so\tf(char const*, "q"\\\\)\n')
    p = collect(["-o", str(tmp_path), "--attach", str(f)], "quit\n")
    assert p.returncode == 0, p.stderr
    rep = json.loads((tmp_path / "collector.json").read_text())
    assert rep["attach"][0]["probe"] == 'enter f(char const*, "q"\\\\)'
    assert rep["attach"][0]["err"] < 0 and "cannot attach" in p.stderr


def test_a_full_disk_is_an_error_not_a_silent_loss(tmp_path):
    """Records it cannot write stop the collection with the reason, exit
    status 3, whatever it could keep."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], check=True)
    try:
        col = subprocess.Popen([COLLECT, "-o", str(mnt)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert col.stdout.readline().strip() == "ready"
        # a traced writer of many small writes: io records fill the disk
        dd = subprocess.Popen(["sh", "-c", "read go; exec dd if=/dev/zero of=/dev/null "
                               "bs=1 count=400000 status=none"], stdin=subprocess.PIPE,
                              text=True)
        col.stdin.write(f"pid {dd.pid}\n")
        col.stdin.flush()
        assert col.stdout.readline().strip() == f"ok pid {dd.pid}"
        dd.communicate("go\n", timeout=120)
        try:
            col.stdin.write("quit\n")
            col.stdin.close()
        except BrokenPipeError:   # it stopped by itself on the error
            pass
        col.wait(timeout=120)
        err = col.stderr.read()
        assert col.returncode == 3, err
        assert "No space left on device" in err
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
