"""What a study is: the seed it redoes, its question and claims, the matrix
it runs (full, and --quick for CI), and how its results are judged."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# a claim's outcome, as the write-up prints it
HELD, NOT_HELD, PARTLY, UNTESTABLE = ("held", "did not hold", "partly held",
                                      "cannot be tested here")


@dataclass
class Verdict:
    outcome: str            # one of HELD, NOT_HELD, PARTLY, UNTESTABLE
    evidence: str           # the figures that decide it, in a sentence or two
    figure: str | None = None   # the picture that shows it (a file of the study)
    # the cells it compares, (A, B) by name: the write-up explains each gap
    # with walscope diff of their traced runs (B - A, component by component)
    pairs: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Claim:
    text: str                              # the seed's claim, translated, one line
    decide: Callable[[Any], Verdict]       # Results -> Verdict


@dataclass
class Metric:
    column: str     # matrix.parquet column
    label: str      # the table's header
    fmt: str        # format of a value, e.g. "{:,.0f}"


@dataclass
class Study:
    id: str                   # "000"
    slug: str                 # "wal-sync-pe": the folder is studies/000-wal-sync-pe
    title: str
    seed: str                 # its file in ../shared/seeds
    question: str
    scenario: str             # runners/experiments/scenarios/<name>.toml
    setup: str                # how it was scaled to this machine, and why
    metrics: list[Metric]
    claims: list[Claim]
    findings: Callable[[Any], list[str]]   # what per-write attribution adds
    full: dict[str, Any] = field(default_factory=dict)    # overrides: fixed, axes, repeats
    quick: dict[str, Any] = field(default_factory=dict)
    cpu_types: str | None = None
    mode: str | None = None   # None: trace_wal's default mode
    # cells whose flame graphs are kept: Results -> [cell names]
    flames: Callable[[Any], list[str]] | None = None
    # what the seed itself did and found, quoted correctly: its setup, how
    # many runs it averaged, its numbers, its hypothesis against its finding
    seed_says: str = ""
    # the question answered in one paragraph from these results
    answer: Callable[[Any], str] | None = None
    # sentences under the results table: what in the data explains it
    table_notes: Callable[[Any], list[str]] | None = None

    @property
    def folder(self) -> str:
        return f"{self.id}-{self.slug}"
