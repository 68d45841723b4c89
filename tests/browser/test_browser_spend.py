"""The spending page in a real browser, at the three sizes, in Light and in Night: the month
against its budget, a chart of 30 bars drawn by the server (no script), its figures in a
table beside it, what it went on, nothing wider than the screen, no serious axe finding,
and the page's colours dimmed with Night. Screenshots go to test-artifacts/."""

from __future__ import annotations

import time
from dataclasses import replace
from decimal import Decimal

import httpx
import pytest

from app.money import Price
from tests.helpers.browser import ARTIFACTS, AXE, SIZES, needs_chromium, served_over_http
from tests.helpers.waits import HTTP_TIMEOUT_S, WAIT_S

pytestmark = needs_chromium

PRICES = {"fake-model": Price(input_per_mtok=Decimal("2.5"), output_per_mtok=Decimal("15"))}
SERIOUS = """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
  .filter(v => ["serious", "critical"].includes(v.impact))
  .map(v => v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", "))"""


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("theme", ["light", "night"])
def test_the_spending_page_reads_at_a_glance(browser, settings, fake_llm, size, theme):
    capped = replace(settings, prices=PRICES, monthly_budget_micros=500_000)
    with served_over_http(capped) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as client:
            for n, child in enumerate(("Mia", "Leo")):
                job = client.post("/stories/generate", json={"prompt": f"a fox {n}",
                                                             "child_name": child},
                                  headers={"Idempotency-Key": f"spend-{size}-{theme}-{n}"})
                assert job.status_code == 202, job.text
                wait_done(client, job.json()["job_id"])
        # bypass_csp: for axe's own script alone (the page's CSP is tested elsewhere).
        context = browser.new_context(viewport=SIZES[size], bypass_csp=True)
        context.add_cookies([{"name": "theme", "value": theme, "url": url}])
        try:
            page = context.new_page()
            errors: list[str] = []
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.goto(f"{url}/spend", wait_until="networkidle")
            assert page.locator("h1").inner_text().startswith("Spending in ")
            assert "of the $0.50 budget" in page.locator(".spend-total").inner_text()
            chart = page.locator("svg.spend-chart")
            assert chart.is_visible() and chart.locator("rect.bar").count() == 30
            assert chart.bounding_box()["width"] <= SIZES[size]["width"]
            # The figures are there for whoever cannot see the bars.
            assert page.locator(".spend-days table tbody tr").count() == 30
            assert chart.get_attribute("role") == "img" and chart.get_attribute("aria-label")
            parts = page.locator(".spend-parts").first.inner_text()
            assert "Stories" in parts and "Pictures" in parts
            assert "Mia" in page.locator(".spend-parts").nth(1).inner_text()
            assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
            page.add_script_tag(path=str(AXE))
            assert page.evaluate(SERIOUS) == []
            bar = page.evaluate("getComputedStyle(document.querySelector("
                                "'.spend-chart .bar')).fill")
            background = page.evaluate("getComputedStyle(document.body).backgroundColor")
            if theme == "night":  # never the brightest thing on a dark screen
                assert luminance(background) < 0.05 and luminance(bar) < 0.5
            page.screenshot(path=str(ARTIFACTS / f"spend-{size}-{theme}.png"), full_page=True)
            assert errors == []
        finally:
            context.close()


def wait_done(client: httpx.Client, job_id: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while client.get(f"/stories/jobs/{job_id}", headers={"Accept": "application/json"}
                     ).json()["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def luminance(css: str) -> float:
    """A CSS rgb() colour's relative luminance (0 black, 1 white)."""
    red, green, blue = (int(part) / 255 for part in
                        css[css.index("(") + 1:css.index(")")].split(",")[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
