"""A flame graph SVG embedded in a page (report.html, the diff's page) as
an iframe whose document holds the SVG inline: its own search and zoom
still work, the page stays one file, and the graph takes the frame's
whole width with its title whole.

inferno draws the title centred at 17 px whatever the width; a long one
(the diff's run names) ran off both sides of a narrow frame and under
"Search". FIT shrinks the title and subtitle, where they need it, to the
room between "Reset Zoom" and "Search", and again when the frame resizes.
"""
from __future__ import annotations

import html
import re

# the tallest an embedded flame graph's frame grows (px); a taller one scrolls
FLAME_HEIGHT = 900

# run in the frame's document after inferno's own init (which makes the
# SVG fluid): inferno's globals fontsize and fontwidth size "Reset Zoom",
# hidden (so unmeasurable) until a zoom shows it
FIT = """<script>
function walscopeFitTitles() {
  var svg = document.querySelector("svg");
  if (!svg) return;
  var width = svg.getBoundingClientRect().width;
  var search = document.getElementById("search");
  var ch = (typeof fontsize == "number" ? fontsize : 12) *
           (typeof fontwidth == "number" ? fontwidth : 0.59);
  var side = 10 + Math.max(search ? search.getComputedTextLength() : 0,
                           "Reset Zoom".length * ch) + 8;
  var room = width - 2 * side;
  ["title", "subtitle"].forEach(function (id) {
    var t = document.getElementById(id);
    if (!t) return;
    t.style.fontSize = "";
    var len = t.getComputedTextLength();
    if (room > 0 && len > room) {
      var size = parseFloat(getComputedStyle(t).fontSize);
      t.style.fontSize = (size * room / len).toFixed(2) + "px";
    }
  });
}
window.addEventListener("load", function () { setTimeout(walscopeFitTitles, 0); });
window.addEventListener("resize", walscopeFitTitles);
</script>"""


def flame_frame(svg: str, title: str) -> str:
    """One flame graph as an iframe whose document is a small HTML page
    holding the SVG inline.  The page stretches the SVG to the frame's
    width (inferno's fluid drawing then drops the SVG's own width, which
    inline in HTML would fall back to 300 px), fits its titles (FIT), and
    the frame is as tall as the graph, so labels fit and its search and
    zoom still work."""
    body = re.sub(r"\A\s*<\?xml[^>]*\?>\s*(<!DOCTYPE[^>]*>)?", "", svg)
    m = re.search(r'<svg[^>]*\sheight="(\d+)', body)
    height = min(int(m.group(1)) if m else FLAME_HEIGHT, FLAME_HEIGHT)
    doc = ('<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
           "html,body{margin:0}svg{display:block;width:100%}</style></head>"
           f"<body>{body}{FIT}</body></html>")
    return (f'<iframe class="flame" title="{html.escape(title)}" '
            f'style="height:{height + 2}px" srcdoc="{html.escape(doc)}"></iframe>')
