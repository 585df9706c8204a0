"""What a study is: the seed it redoes, its question and claims, the matrix
it runs (full, and --quick for CI), and how its results are judged."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# the one vocabulary of verdicts, a claim's and each of its parts'
# (docs/matrices.md, "The verdict rule")
HELD = "held"
PARTLY = "partly held"
NOT_HELD = "did not hold"
NOT_DISTINGUISHABLE = "not distinguishable here"
UNTESTABLE = "cannot be tested here"
VERDICTS = (HELD, PARTLY, NOT_HELD, NOT_DISTINGUISHABLE, UNTESTABLE)


@dataclass
class Part:
    """One testable statement of a claim ("fillseq > fillrandom, sync=false")
    and its verdict, with the figures that decide it (or, cannot be tested,
    why not)."""
    name: str
    verdict: str
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.name}: {self.verdict!r} is not a verdict")

    def text(self) -> str:
        return f"{self.name}: **{self.verdict}**" + (f" ({self.evidence})" if self.evidence
                                                      else "")


def claim_verdict(parts: list[Part]) -> str:
    """A claim's verdict from its parts' (docs/matrices.md): a part that
    cannot be tested makes the claim untestable (what could not be tested may
    be what fails); one verdict shared by every part is the claim's; a mix
    with a part held (or partly) is partly held; a mix of did-not-hold and
    not-distinguishable did not hold (a part was called against the claim,
    none for it)."""
    if not parts:
        raise ValueError("a claim with no parts has no verdict")
    got = {p.verdict for p in parts}
    if UNTESTABLE in got:
        return UNTESTABLE
    if len(got) == 1:
        return got.pop()
    return PARTLY if got & {HELD, PARTLY} else NOT_HELD


@dataclass
class Verdict:
    outcome: str            # one of VERDICTS: claim_verdict(parts) where parts are given
    evidence: str           # the figures that decide it, in a sentence or two
    figure: str | None = None   # the picture that shows it (a file of the study)
    # the cells it compares, (A, B) by name: the write-up explains each gap
    # with walscope diff of their traced runs (B - A, component by component)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)

    @staticmethod
    def of(parts: list[Part], figure: str | None = None,
           pairs: list[tuple[str, str]] | None = None, note: str = "") -> "Verdict":
        """A claim's verdict from its parts, the evidence their figures
        (and a note after them)."""
        evidence = "; ".join(p.text() for p in parts) + "." + (f" {note}" if note else "")
        return Verdict(claim_verdict(parts), evidence, figure, pairs or [], parts)


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
