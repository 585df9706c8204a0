"""Names of the addresses a run's records refer to, as the tracer resolved
them on the tracing host (symbols.json, written by collectors.symbolize)."""
from __future__ import annotations

from pathlib import Path

from runfolder.files import RunFolder


class RunSymbols:
    """user(pid, ip) and kernel(ip) names; "[unknown]" / "[kernel]" for an
    address the tracer did not resolve (a run whose tracer died)."""

    def __init__(self, run_dir: Path):
        raw = RunFolder(run_dir).symbols()
        self._user = {int(pid): {int(ip, 16): n for ip, n in names.items()}
                      for pid, names in raw.get("user", {}).items()}
        self._kernel = {int(ip, 16): n for ip, n in raw.get("kernel", {}).items()}
        self._callers = raw.get("callers", {})

    def user(self, pid: int, ip: int) -> str:
        return self._user.get(pid, {}).get(ip, "[unknown]")

    def callers(self, pid: int, tid: int, ts_ns: int) -> list[str]:
        """The names of a sample's callers, innermost first, as the tracer
        unwound them from its stack copy (none where it could not)."""
        chain = self._callers.get(f"{tid:x}:{ts_ns:x}", ())
        return [self.user(pid, int(ip, 16)) for ip in chain]

    def kernel(self, ip: int) -> str:
        return self._kernel.get(ip, "[kernel]")
