"""Screenshot the first screen of a report.html with headless Chromium.

`make report-png` makes docs/img/report.png this way from the demo's run
(`./setup.sh --demo` first), so the README's picture is the report as it
is now, never an old screenshot.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


class ScreenshotError(RuntimeError):
    pass


def flags(profile: Path) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}"]


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 900) -> Path:
    """The page's top width x height pixels, once its scripts have drawn
    the figures (Chromium's virtual time runs them to the end)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise ScreenshotError("chromium is not installed (setup.sh installs it)")
    if not html.exists():
        raise ScreenshotError(f"{html}: no such file")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="walscope-shot-") as d:
        shot = Path(d) / "shot.png"
        p = subprocess.run([browser, *flags(Path(d) / "profile"),
                            f"--window-size={width},{height}", "--virtual-time-budget=15000",
                            f"--screenshot={shot}", html.resolve().as_uri()],
                           capture_output=True, text=True, timeout=180)
        if not shot.exists():
            raise ScreenshotError(f"chromium wrote no screenshot: {p.stderr.strip()[-300:]}")
        shutil.move(str(shot), png)
    return png


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m viz.screenshot",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path, help="a report.html")
    ap.add_argument("png", type=Path, help="the PNG to write")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    a = ap.parse_args(argv)
    try:
        print(screenshot(a.html, a.png, a.width, a.height))
    except ScreenshotError as e:
        print(f"screenshot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
