"""The last 30 days' spending as an inline SVG bar chart, drawn on the server: no script,
no library, colours from the page's own (currentColor and CSS variables), so it reads in
Night as in Day. The page puts the same figures in a table beside it, for a screen reader,
and the first and last days' names under it.

    svg = bar_chart([(date(2026, 12, 1), 12_300), ...])     # markup (Markup-safe text)
"""

from __future__ import annotations

from datetime import date

from markupsafe import Markup, escape

from app.i18n import ngettext
from app.i18n.formats import number, short_day
from app.money.amounts import money

WIDTH, HEIGHT = 600, 160
BASELINE = 156  # the days' names are the page's text below it: a stretched SVG would squash them
GAP = 4


def bar_chart(days: list[tuple[date, int]]) -> Markup:
    most = max((micros for _, micros in days), default=0)
    step = WIDTH / max(len(days), 1)
    bars = []
    for index, (day, micros) in enumerate(days):
        height = 0.0 if most == 0 else max((BASELINE - 8) * micros / most, 2.0 if micros else 0)
        x = index * step + GAP / 2
        bars.append(
            f'<rect class="bar" x="{x:.1f}" y="{BASELINE - height:.1f}" width="{step - GAP:.1f}"'
            f' height="{height:.1f}" rx="2"><title>{escape(f"{short_day(day)}: {money(micros)}")}'
            "</title></rect>")
    said = ngettext("Spending on the last %(days)s day; the table has the figures",
                    "Spending on each of the last %(days)s days; the table has the figures",
                    len(days)) % {"days": number(len(days))}
    return Markup(
        f'<svg class="spend-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        f' aria-label="{escape(said)}"'
        ' preserveAspectRatio="none">'
        f'<line class="axis" x1="0" y1="{BASELINE}" x2="{WIDTH}" y2="{BASELINE}"/>'
        + "".join(bars) + "</svg>")
