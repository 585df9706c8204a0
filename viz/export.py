"""Static PNG export of any report figure (plotly through kaleido, which
drives the system's Chromium): the studies' pictures are the report's
figures, rendered by the same code."""
from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go


class ExportError(RuntimeError):
    pass


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def write_png(fig: go.Figure, path: Path, width: int = 1100, height: int | None = None,
              title: str | None = None) -> Path:
    """Render fig to path (PNG); height defaults to the figure's own."""
    fig = go.Figure(fig)
    if title:
        fig.update_layout(title=title)
    try:
        fig.write_image(str(path), format="png", width=width,
                        height=height or fig.layout.height or 480, scale=1)
    except Exception as e:   # kaleido missing, or no browser it can drive
        raise ExportError(f"cannot render {path.name}: {e}") from None
    return path
