"""Inline SVG charts for the HTML report (no library, no network).

Every label is HTML-escaped (`kernel.untrusted.html_text`).
"""

from __future__ import annotations

from math import ceil, log10

from kernel.untrusted import html_text

WIDTH = 560
HEIGHT = 220
PAD_LEFT, PAD_BOTTOM, PAD_TOP = 44, 46, 14
LABEL_CHAR_PX = 6.0
"""Width of one character of a 10 px tick label: a rotated label's room below the plot is sized from it."""


def _frame(body: list[str], title: str, y_max: float, y_label: str, pad_bottom: int = PAD_BOTTOM) -> str:
    """The chart in a figure whose caption is its title (visible, not only a tooltip); `pad_bottom` above the
    default makes room for long rotated labels (the plot keeps its height)."""
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    height = HEIGHT - PAD_BOTTOM + pad_bottom
    ticks = []
    for i in range(5):
        value = y_max * i / 4
        y = PAD_TOP + plot_h - plot_h * i / 4
        ticks.append(f'<line x1="{PAD_LEFT}" x2="{WIDTH - 6}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{PAD_LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" class="tick">{value:g}</text>')
    return (f'<figure class="chart-box"><figcaption>{html_text(title)}</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
            f'aria-label="{html_text(title)}" class="chart"><title>{html_text(title)}</title>{"".join(ticks)}'
            f'<text x="10" y="{PAD_TOP + plot_h / 2:.1f}" transform="rotate(-90 10 {PAD_TOP + plot_h / 2:.1f})" '
            f'text-anchor="middle" class="tick">{html_text(y_label)}</text>{"".join(body)}</svg></figure>')


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** int(log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return float(step * magnitude)
    return float(ceil(value))


Bar = tuple[str, float | None, str] | tuple[str, float | None, str, tuple[float, float] | None]
"""(label, value or None, note under the label[, (low, high) interval drawn as a whisker])."""


def _whisker(x: float, bounds: tuple[float, float] | None, top: float, plot_h: float, label: str) -> str:
    if bounds is None:
        return ""
    y_low, y_high = (PAD_TOP + plot_h - plot_h * min(b, top) / top for b in bounds)
    tip = f"{label}: interval {bounds[0]:g}–{bounds[1]:g}"
    return (f'<g class="whisker-group"><title>{html_text(tip)}</title>'
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y_low:.1f}" y2="{y_high:.1f}" class="whisker"/>'
            f'<line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{y_low:.1f}" y2="{y_low:.1f}" class="whisker"/>'
            f'<line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{y_high:.1f}" y2="{y_high:.1f}" class="whisker"/></g>')


def bar_chart(items: list[Bar], title: str, y_label: str, y_max: float | None = None) -> str:
    """Vertical bars (see `Bar`); an interval, when given, is drawn as a whisker over the bar."""
    if not items:
        return f'<p class="empty">{html_text(title)}: no data</p>'
    top = y_max or _nice_max(max((item[1] or 0) for item in items))
    plot_w, plot_h = WIDTH - PAD_LEFT - 8, HEIGHT - PAD_BOTTOM - PAD_TOP
    slot = plot_w / len(items)
    body = []
    for i, item in enumerate(items):
        label, value, note = item[0], item[1], item[2]
        bounds = item[3] if len(item) > 3 else None  # type: ignore[misc]
        x = PAD_LEFT + i * slot + slot * 0.15
        h = plot_h * (value or 0) / top
        y = PAD_TOP + plot_h - h
        shown = "n/a" if value is None else f"{value:g}"
        body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" class="bar">'
                    f'<title>{html_text(label)}: {html_text(shown)}</title></rect>'
                    f'<text x="{x + slot * 0.35:.1f}" y="{y - 3:.1f}" text-anchor="middle" class="val">'
                    f'{html_text(shown)}</text>'
                    f'<text x="{x + slot * 0.35:.1f}" y="{HEIGHT - PAD_BOTTOM + 14}" text-anchor="middle" '
                    f'class="tick">{html_text(label)}</text>'
                    f'<text x="{x + slot * 0.35:.1f}" y="{HEIGHT - PAD_BOTTOM + 28}" text-anchor="middle" '
                    f'class="tick">{html_text(note)}</text>'
                    + _whisker(x + slot * 0.35, bounds, top, plot_h, label))
    return _frame(body, title, top, y_label)


def stacked_chart(items: list[tuple[str, int, int]], title: str, y_label: str) -> str:
    """Per item a bar of successful calls with failed calls stacked on top: (label, ok, failed)."""
    if not items:
        return f'<p class="empty">{html_text(title)}: no data</p>'
    top = _nice_max(max(ok + bad for _, ok, bad in items))
    plot_w, plot_h = WIDTH - PAD_LEFT - 8, HEIGHT - PAD_BOTTOM - PAD_TOP
    slot = plot_w / len(items)
    body = []
    for i, (label, ok, bad) in enumerate(items):
        x = PAD_LEFT + i * slot + slot * 0.1
        h_ok, h_bad = plot_h * ok / top, plot_h * bad / top
        base = PAD_TOP + plot_h
        tip = f"{label}: {ok + bad} calls, {bad} failed"
        body.append(f'<g><title>{html_text(tip)}</title>'
                    f'<rect x="{x:.1f}" y="{base - h_ok:.1f}" width="{slot * 0.8:.1f}" height="{h_ok:.1f}" '
                    f'class="bar"/>'
                    f'<rect x="{x:.1f}" y="{base - h_ok - h_bad:.1f}" width="{slot * 0.8:.1f}" height="{h_bad:.1f}" '
                    f'class="bar-bad"/></g>')
        if len(items) <= 40:
            body.append(f'<text x="{x + slot * 0.4:.1f}" y="{HEIGHT - PAD_BOTTOM + 8}" class="tick" '
                        f'transform="rotate(60 {x + slot * 0.4:.1f} {HEIGHT - PAD_BOTTOM + 8})">{html_text(label)}</text>')
    longest = max(len(label) for label, _, _ in items) if len(items) <= 40 else 0
    return _frame(body, title, top, y_label, max(PAD_BOTTOM, int(longest * LABEL_CHAR_PX * 0.87) + 16))


def histogram(values: list[float], title: str, x_label: str, bins: int = 12) -> str:
    """Counts of `values` in equal-width bins from 0 to the max."""
    if not values:
        return f'<p class="empty">{html_text(title)}: no data</p>'
    hi = max(values) or 1.0
    width = hi / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int(v / width))] += 1
    items = [(f"{i * width:.0f}", float(c), "") for i, c in enumerate(counts)]
    chart = bar_chart(items, title, "calls")
    return chart.replace("</svg>", f'<text x="{WIDTH / 2}" y="{HEIGHT - 4}" text-anchor="middle" class="tick">'
                                   f'{html_text(x_label)}</text></svg>', 1)
