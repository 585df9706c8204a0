"""Screenshot the first screen of a report.html with headless Chromium,
or measure what it drew there.

`make report-png` makes docs/img/report.png this way from the demo's run
(`./setup.sh --demo` first), so the README's picture is the report as it
is now, never an old screenshot. measure() runs a script in the drawn
page and returns what it found (the tests' widths, boxes and labels).
"""
from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


class ScreenshotError(RuntimeError):
    pass


def flags(profile: Path) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}"]


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise ScreenshotError("chromium is not installed (setup.sh installs it)")
    return found


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 900) -> Path:
    """The page's top width x height pixels, once its scripts have drawn
    the figures (Chromium's virtual time runs them to the end)."""
    chromium = browser()
    if not page.exists():
        raise ScreenshotError(f"{page}: no such file")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="walscope-shot-") as d:
        shot = Path(d) / "shot.png"
        p = subprocess.run([chromium, *flags(Path(d) / "profile"),
                            f"--window-size={width},{height}", "--virtual-time-budget=15000",
                            f"--screenshot={shot}", page.resolve().as_uri()],
                           capture_output=True, text=True, timeout=180)
        if not shot.exists():
            raise ScreenshotError(f"chromium wrote no screenshot: {p.stderr.strip()[-300:]}")
        shutil.move(str(shot), png)
    return png


# wraps measure()'s script: run once the page (its figures, its frames'
# own scripts) has drawn, its result left in the DOM for --dump-dom
PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var out;
  try { out = (function () { %s })(); } catch (e) { out = {error: String(e)}; }
  var pre = document.createElement("pre");
  pre.id = "walscope-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, %d); });
</script>"""


def measure(page: Path, script: str, width: int = 1280, height: int = 900,
            settle_ms: int = 1500) -> Any:
    """Open a copy of the page at width x height with script (a function
    body that returns what it measured, as JSON) added, run it settle_ms
    after the page loaded, and return its result. Frames with srcdoc
    documents are the page's origin: the script reads inside them."""
    chromium = browser()
    text = page.read_text(errors="replace")
    probe = PROBE % (script, settle_ms)
    at = text.rfind("</body>")
    text = text[:at] + probe + text[at:] if at >= 0 else text + probe
    with tempfile.TemporaryDirectory(prefix="walscope-measure-") as d:
        copy = Path(d) / page.name
        copy.write_text(text)
        p = subprocess.run([chromium, *flags(Path(d) / "profile"),
                            f"--window-size={width},{height}",
                            f"--virtual-time-budget={settle_ms + 15000}", "--dump-dom",
                            copy.as_uri()], capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="walscope-measure">(.*?)</pre>', p.stdout, re.S)
    if not m:
        raise ScreenshotError(f"the page's measure did not run: {p.stderr.strip()[-300:]}")
    out = json.loads(html.unescape(m.group(1)))
    if isinstance(out, dict) and set(out) == {"error"}:
        raise ScreenshotError(f"the page's measure failed: {out['error']}")
    return out


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
