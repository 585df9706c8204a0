"""What a run lost, in words for the terminal and the report: "453 stacks lost,
2 returns with no entry", not summary.json's `{"stack": 453}`.

The names are the collector's counters (probes/walscope.h `ws_counter`,
summary.json's lost_events and tracking_gaps); a counter this table does
not know yet is still shown, by its own name.
"""
from __future__ import annotations

from typing import Any

# lost_events key -> (one, many): what one lost event is
LOST = {"stack": ("stack", "stacks"),
        "offcpu": ("off-CPU period", "off-CPU periods"),
        "write": ("write record", "write records"),
        "io": ("I/O record", "I/O records"),
        "sched": ("scheduler record", "scheduler records"),
        "open": ("open record", "open records"),
        "sample": ("CPU sample", "CPU samples"),
        "task": ("task record", "task records"),
        "object": ("object record", "object records"),
        "wall": ("wall-sweep record", "wall-sweep records")}
# tracking_gaps key -> (one, many): the whole phrase, its count first
GAPS = {"threads_full": ("thread not tracked", "threads not tracked"),
        "fds_full": ("file of unknown kind", "files of unknown kind"),
        "depth_overflow": ("phase nested too deep", "phases nested too deep"),
        "phase_mismatch": ("return with no entry", "returns with no entry")}


def _phrase(n: int, words: tuple[str, str]) -> str:
    return f"{n:,} {words[0] if n == 1 else words[1]}"


def loss_phrases(summary: dict[str, Any]) -> list[str]:
    """Each non-zero loss of a run's summary.json as a phrase, lost
    events first."""
    out = []
    for k, v in (summary.get("lost_events") or {}).items():
        if v:
            out.append(_phrase(v, LOST.get(k, (f"{k} event", f"{k} events"))) + " lost")
    for k, v in (summary.get("tracking_gaps") or {}).items():
        if v:
            out.append(_phrase(v, GAPS.get(k, (k.replace("_", " "),) * 2)))
    return out


def losses(summary: dict[str, Any]) -> str:
    """The run's losses in one line: "none", or the phrases joined."""
    return ", ".join(loss_phrases(summary)) or "none"
