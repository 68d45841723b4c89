"""The household's bedtime drives Night (issue 29), in a real browser: with the automatic
theme a page is Night from half an hour before bedtime (18:30 until the family sets its own
on the Children page) until morning, decided on the device from its clock in the
household's zone; a bedtime changed on the Children page moves it; a page saved for offline
reading follows it; and in Night the moon logo is dim. The Children page's rows hold
together on a phone.

Debian's chromium through Playwright (tests/helpers/browser.py); the demo storyteller on a
database of this module's own; screenshots go to test-artifacts/household-bedtime-*.png.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import ARTIFACTS, SIZES, app_of_its_own, needs_chromium
from tests.helpers.waits import HTTP_TIMEOUT_S, WAIT_S

pytestmark = needs_chromium

# The household's zone is the app's (UTC); the device is elsewhere, so its own clock is not
# the one that says when bedtime is.
DEVICE_TZ = "America/New_York"
LOGO_NIGHT_LUMINANCE_MAX = 0.35  # Night's accent is about 0.24; the logo was 0.6
SERVICE_WORKER_IN_CONTROL = """() => new Promise(resolve => {
  if (navigator.serviceWorker.controller) return resolve(true);
  navigator.serviceWorker.addEventListener("controllerchange", () => resolve(true));
})"""
SAVED = """async ([path, bedtime]) => {
  for (let i = 0; i < 100; i++) {
    const names = (await caches.keys()).filter(n => n.startsWith("bedtime-stories-"));
    for (const name of names) {
      const kept = await (await caches.open(name)).match(path, {ignoreVary: true});
      if (kept && (await kept.text()).includes(`data-bedtime="${bedtime}"`)) return true;
    }
    await new Promise(r => setTimeout(r, 100));
  }
  return false;
}"""
# The brightest pixel of a PNG (a screenshot of the logo as painted), as WCAG's relative
# luminance: drawn on a canvas from a data: URL, which the CSP allows for images.
BRIGHTEST = """async (png) => {
  const image = new Image();
  image.src = "data:image/png;base64," + png;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const lin = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  let brightest = 0;
  for (let i = 0; i < data.length; i += 4) {
    const l = 0.2126 * lin(data[i]) + 0.7152 * lin(data[i + 1]) + 0.0722 * lin(data[i + 2]);
    if (l > brightest) brightest = l;
  }
  return brightest;
}"""


def at(hour: int, minute: int) -> datetime:
    return datetime(2026, 12, 1, hour, minute, tzinfo=UTC)


@pytest.fixture(scope="module")
def app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """No household password: nobody signs in (loopback)."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("household-bedtime"),
                        allow_open=True, daily_story_limit=1000) as url:
        yield url


@pytest.fixture
def bedtime(app: str) -> Iterator[None]:
    """The household's bedtime put back to the default after a test that changes it."""
    yield
    set_bedtime(app, "18:30")


def set_bedtime(app: str, bedtime: str) -> None:
    response = httpx.post(app + "/children/bedtime", json={"bedtime": bedtime},
                          timeout=HTTP_TIMEOUT_S)
    assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def story(app: str) -> str:
    """The path of one story written by the demo storyteller."""
    asked = httpx.post(app + "/stories/generate", json={"prompt": "a snail who keeps the moon"},
                       headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=HTTP_TIMEOUT_S)
    assert asked.status_code == 202, asked.text
    job_id = asked.json()["job_id"]
    deadline = datetime.now(UTC).timestamp() + WAIT_S
    while datetime.now(UTC).timestamp() < deadline:
        job = httpx.get(f"{app}/stories/jobs/{job_id}", headers={"Accept": "application/json"},
                        timeout=HTTP_TIMEOUT_S).json()
        if job["status"] == "completed":
            return f"/stories/{job['story_id']}"
        assert job["status"] in ("pending", "running"), job
    raise AssertionError(f"job {job_id} is not written after {WAIT_S}s")


def theme_at(open_page, app: str, path: str, moment: datetime, size: str = "phone"):
    watched = open_page(app, size, timezone_id=DEVICE_TZ)
    page = watched.page
    page.clock.install(time=moment)
    page.goto(app + path)
    return watched, page


@pytest.mark.parametrize(("clock", "shown"), [
    ((18, 5), "night"), ((17, 55), "dark"), ((23, 30), "night"), ((6, 55), "night"),
    ((7, 5), "dark"),
], ids=["18h05", "17h55", "23h30", "06h55", "07h05"])
def test_night_comes_on_half_an_hour_before_the_default_bedtime(open_page, app, clock, shown):
    watched, page = theme_at(open_page, app, "/", at(*clock))
    expect(page.locator("html")).to_have_attribute("data-bedtime", "18:30")
    expect(page.locator("html")).to_have_attribute("data-theme", shown)
    expect(page.locator("meta[name=theme-color]")).to_have_attribute(
        "content", {"night": "#0c0906", "dark": "#16120e"}[shown])
    assert watched.problems == []


def test_a_bedtime_changed_on_the_children_page_moves_night(open_page, app, bedtime):
    watched, page = theme_at(open_page, app, "/children", at(18, 5))
    expect(page.locator("html")).to_have_attribute("data-theme", "night")
    field = page.get_by_role("textbox", name="Bedtime")
    expect(field).to_have_value("18:30")
    field.fill("19:30")  # Night from 19:00: not yet
    page.get_by_role("button", name="Save bedtime").click()
    page.wait_for_url(app + "/children#bedtime")
    expect(page.locator("html")).to_have_attribute("data-bedtime", "19:30")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.get_by_role("textbox", name="Bedtime")).to_have_value("19:30")
    page.clock.run_for("55:00")  # 19:00, with the page open: Night comes on by itself
    expect(page.locator("html")).to_have_attribute("data-theme", "night")
    page.screenshot(path=str(ARTIFACTS / "household-bedtime-changed-phone.png"))
    page.get_by_role("textbox", name="Bedtime").fill("21:00")
    page.get_by_role("button", name="Save bedtime").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")  # 19:00: too early now
    assert watched.problems == []
    # Another page, another device: the household's bedtime, not this one's.
    watched, other = theme_at(open_page, app, "/stories", at(20, 29), size="tablet")
    expect(other.locator("html")).to_have_attribute("data-theme", "dark")
    other.clock.run_for("02:00")  # 20:31
    expect(other.locator("html")).to_have_attribute("data-theme", "night")
    assert watched.problems == []


def test_a_bedtime_not_valid_is_said_beside_its_field(open_page, app):
    watched, page = theme_at(open_page, app, "/children", at(12, 0))
    page.get_by_role("textbox", name="Bedtime").evaluate("e => { e.removeAttribute('min'); }")
    page.get_by_role("textbox", name="Bedtime").fill("09:00")
    page.get_by_role("button", name="Save bedtime").click()
    expect(page.locator("#bedtime-error")).to_have_text(
        "Bedtime must be in the evening, from 16:00 to 23:59.")
    expect(page.get_by_role("textbox", name="Bedtime")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("html")).to_have_attribute("data-bedtime", "18:30")  # unchanged


def test_a_saved_page_opened_offline_follows_the_bedtime(browser, app, story, bedtime):
    context = browser.new_context(viewport=SIZES["phone"], timezone_id=DEVICE_TZ)
    problems: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.goto(app + "/")
        assert page.evaluate(SERVICE_WORKER_IN_CONTROL) is True
        for bedtime_now, shown in (("18:30", "night"), ("19:30", "dark")):
            set_bedtime(app, bedtime_now)
            page.goto(app + story)  # read online: kept, with the bedtime of now
            assert page.evaluate(SAVED, [story, bedtime_now]) is True
            context.set_offline(True)
            offline = context.new_page()
            offline.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            offline.clock.install(time=at(18, 5))
            offline.goto(app + story)
            expect(offline.locator("html")).to_have_attribute("data-bedtime", bedtime_now)
            expect(offline.locator("html")).to_have_attribute("data-theme", shown)
            offline.screenshot(
                path=str(ARTIFACTS / f"household-bedtime-offline-{bedtime_now[:2]}h-phone.png"))
            offline.close()
            context.set_offline(False)
        assert problems == []
    finally:
        context.set_offline(False)
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_moon_logo_is_dim_in_night(open_page, app, size):
    watched, page = theme_at(open_page, app, "/", at(21, 0), size=size)
    expect(page.locator("html")).to_have_attribute("data-theme", "night")
    logo = page.locator(".brand img")
    night = page.evaluate(BRIGHTEST, base64.b64encode(logo.screenshot()).decode())
    page.screenshot(path=str(ARTIFACTS / f"household-bedtime-night-logo-{size}.png"))
    assert night <= LOGO_NIGHT_LUMINANCE_MAX, night
    page.clock.set_system_time(at(12, 0))  # by day: the logo as bright as ever
    page.clock.run_for("01:01")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    day = page.evaluate(BRIGHTEST, base64.b64encode(logo.screenshot()).decode())
    assert day > 0.5 > LOGO_NIGHT_LUMINANCE_MAX, day  # the measure sees a bright logo
    assert watched.problems == []


# -- the Children page on a phone ------------------------------------------------------------


LABELS_IN_A_ROW = """() => [...document.querySelectorAll("#add-child .field-row .field")].map(f => {
  const label = f.querySelector("label"), input = f.querySelector("input, select");
  const line = parseFloat(getComputedStyle(label).lineHeight) || 24;
  return {label: label.textContent.trim(),
          lines: Math.round(label.getBoundingClientRect().height / line),
          labelTop: label.getBoundingClientRect().top, bottom: input.getBoundingClientRect().bottom,
          right: f.getBoundingClientRect().right,
          card: f.closest(".card").getBoundingClientRect().right};
})"""


def test_the_children_page_holds_together_on_a_phone(open_page, app):
    for child in ({"name": "Mia", "age": 5, "language": "en"}, {"name": "Bo", "age": 1}):
        added = httpx.post(app + "/children", json=child, timeout=HTTP_TIMEOUT_S)
        assert added.status_code == 201, added.text
    watched, page = theme_at(open_page, app, "/children", at(12, 0))
    expect(page.get_by_text("5 years · English")).to_be_visible()
    expect(page.get_by_text("1 year · any language")).to_be_visible()
    row = page.evaluate(LABELS_IN_A_ROW)
    assert [field["label"] for field in row] == ["Story language", "Age (optional)"]
    assert all(field["lines"] == 1 for field in row), row  # no label wraps
    assert abs(row[0]["labelTop"] - row[1]["labelTop"]) < 4, row  # one line, not two (24 px)
    assert abs(row[0]["bottom"] - row[1]["bottom"]) < 1, row  # the boxes side by side
    assert all(field["right"] <= field["card"] for field in row), row
    mia = page.locator("section.child-profile").filter(has=page.get_by_role("heading", name="Mia"))
    change = mia.locator("summary", has_text="Change…")
    remove = mia.locator("summary", has_text="Remove…")
    weigh = "e => { const s = getComputedStyle(e); return [s.borderTopWidth, s.fontWeight]; }"
    assert change.evaluate(weigh)[0] != "0px"  # Change… is a button
    assert remove.evaluate(weigh) == ["0px", "400"]  # Remove… a quiet link beside it
    change_box, remove_box = change.bounding_box(), remove.bounding_box()
    assert abs(change_box["y"] - remove_box["y"]) < 1  # beside, on one line
    assert remove_box["height"] >= 44  # still a full tap target
    page.screenshot(path=str(ARTIFACTS / "household-bedtime-children-phone.png"), full_page=True)
    assert watched.problems == []
