"""walscope analyse RUN_DIR...: analyse run folders again, offline, and
render their views again (flame graph SVGs, report.html) from what was
analysed, so none is left stale.  Needs no root; the exit status is
analysis/__main__.py's (4: a partial run)."""
from __future__ import annotations

from pathlib import Path

from analysis.__main__ import main as analyse_main
from runfolder.files import RunFolder


def render(run_dir: Path) -> None:
    """The run's views, the old ones removed first: a view that cannot be
    rendered now is missing, not left from an earlier analysis."""
    from runners.command.record import render_views
    folder = RunFolder(run_dir)
    for old in [folder.report_html, *folder.flame_svgs()]:
        old.unlink(missing_ok=True)
    render_views(run_dir)


def main(argv: list[str] | None = None) -> int:
    return analyse_main(argv, render=render)


if __name__ == "__main__":
    raise SystemExit(main())
