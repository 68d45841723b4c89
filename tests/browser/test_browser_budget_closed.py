"""The month's budget says no before the tap: with no room for a short story the form, its
fields and the one-tap buttons are closed with the reason, as the day's limit closes them;
and a refusal that comes anyway (the budget ran out while the page was open) is brought
into view and focused on a phone, whether it came back with the page (a one-tap story, a
plain form) or swapped in by htmx (the typed form). Screenshots in test-artifacts/."""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from dataclasses import replace
from decimal import Decimal

import asyncpg
import httpx
import pytest
from playwright.sync_api import expect

from app.money import Price
from app.runtime import meter_for
from app.stories import StoryRequest
from tests.helpers.browser import ARTIFACTS, SIZES, needs_chromium, served_over_http
from tests.helpers.waits import HTTP_TIMEOUT_S, json_when
from tests.money.test_budget import PRICES, shortest_set_aside

pytestmark = needs_chromium



def spend(database_url: str, micros: int) -> None:
    """What the month's stories cost so far, as the ledger holds it."""
    async def insert() -> None:
        connection = await asyncpg.connect(database_url)
        try:
            await connection.execute("INSERT INTO spend (kind, model, cost_micros)"
                                     " VALUES ('story', 'fake-model', $1)", micros)
        finally:
            await connection.close()
    # In a thread of its own: Playwright's sync API keeps an event loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, insert()).result()


@pytest.fixture
def capped(settings):
    """The household's app with a month's budget (room for ten short stories), a child for
    the one-tap button; its URL, database and what nearly uses the budget up."""
    short = shortest_set_aside(settings)
    budget = 10 * short
    with served_over_http(replace(settings, prices=PRICES, monthly_budget_micros=budget)) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
            assert http.post("/children", json={"name": "Mia", "age": 5}).status_code == 201
        yield url, settings.database_url, budget - short // 2


def focused_and_in_view(page, locator) -> None:
    expect(locator).to_be_focused()
    expect(locator).to_be_in_viewport(ratio=1)  # once a smooth scroll has brought it


@pytest.mark.parametrize("size", list(SIZES))
def test_with_no_room_the_form_and_the_buttons_are_closed_with_the_reason(
    open_page, capped, size
):
    url, database_url, nearly_all = capped
    spend(database_url, nearly_all)
    page = open_page(url, size).page
    page.goto(url + "/")
    note = page.locator("#limit-note")
    expect(note).to_contain_text("no room for another story")
    expect(page.get_by_role("button", name="Tonight, for Mia")).to_be_disabled()
    expect(page.get_by_role("button", name="Write the story")).to_have_count(0)
    expect(page.locator("#prompt")).to_be_disabled()
    expect(page.get_by_text("No more stories this month")).to_be_visible()
    expect(page.get_by_text("stories left today")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / f"budget-closed-{size}.png"), full_page=True)


def test_a_one_tap_refusal_is_brought_into_view_and_focused_on_a_phone(open_page, capped):
    url, database_url, nearly_all = capped
    page = open_page(url, "phone").page
    page.goto(url + "/")
    spend(database_url, nearly_all)  # run out while the page was open
    page.get_by_role("button", name="Tonight, for Mia").click()
    focused_and_in_view(page, page.locator("#limit-note"))
    expect(page.locator("#limit-note")).to_contain_text("no room for another story")
    page.screenshot(path=str(ARTIFACTS / "budget-refused-one-tap-phone.png"))


def test_a_typed_story_s_refusal_is_brought_into_view_and_focused_on_a_phone(
    open_page, capped
):
    url, database_url, nearly_all = capped
    page = open_page(url, "phone").page
    page.goto(url + "/")
    page.fill("#prompt", "a fox who paints the moon")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # the button in reach
    spend(database_url, nearly_all)
    page.get_by_role("button", name="Write the story").click()
    note = page.locator("#story-form [role=alert]")
    focused_and_in_view(page, note)
    # The one-tap buttons close with the form: no tap posts the page to be refused again.
    expect(page.get_by_role("button", name="Tonight, for Mia")).to_be_disabled()
    page.screenshot(path=str(ARTIFACTS / "budget-refused-typed-phone.png"))


ROOM_POLL_S = 5 * 0.4  # app/web/templates.py: ROOM_POLL_CARDS card polls


@pytest.fixture
def capped_quickly(settings):
    """`capped`, with cards polling every 0.4 s: an open page asks what is closed every 2 s."""
    short = shortest_set_aside(settings)
    budget = 10 * short
    with served_over_http(replace(settings, prices=PRICES, monthly_budget_micros=budget,
                                  card_poll_s=0.4)) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
            assert http.post("/children", json={"name": "Mia", "age": 5}).status_code == 201
        yield url, settings.database_url, budget - short // 2


@pytest.mark.parametrize("size", list(SIZES))
def test_an_open_page_closes_its_spending_controls_with_the_reason_without_a_reload(
    open_page, capped_quickly, size
):
    """The budget runs out on another device while this page is open: within a poll or two
    its one-tap button, its form and Write close, the reason floats over the page's foot
    (nothing on the page moves), what was typed stays, and a post that slips through is
    refused (429 budget_reached)."""
    url, database_url, nearly_all = capped_quickly
    watched = open_page(url, size)
    page = watched.page
    page.goto(url + "/")
    one_tap = page.get_by_role("button", name="Tonight, for Mia")
    write = page.get_by_role("button", name="Write the story")
    expect(one_tap).to_be_enabled()
    page.fill("#prompt", "a fox who paints the moon")
    form_top = page.locator("#story-form").bounding_box()["y"]
    spend(database_url, nearly_all)  # another device's stories
    within = {"timeout": (2 * ROOM_POLL_S + 3) * 1000}  # a poll or two, and a margin
    expect(one_tap).to_be_disabled(**within)
    expect(write).to_be_disabled()
    expect(page.locator("#prompt")).to_be_disabled()
    expect(page.locator("#prompt")).to_have_value("a fox who paints the moon")
    note = page.locator("#closed-note")
    expect(note).to_contain_text("no room for another story")
    expect(note).to_be_in_viewport()
    assert one_tap.get_attribute("aria-describedby") == "closed-note"
    assert page.locator("#story-form").bounding_box()["y"] == form_top  # it floats
    page.screenshot(path=str(ARTIFACTS / f"budget-closed-open-page-{size}.png"))
    # Whatever slips through (a page without app.js, a tap in between) is refused.
    key = page.locator("#story-form input[name=idempotency_key]").input_value()
    refused = page.request.post(url + "/stories/generate", headers={
        "Content-Type": "application/json", "Idempotency-Key": key, "Origin": url},
        data='{"prompt": "a fox who paints the moon"}')
    assert refused.status == 429
    assert refused.json()["error"]["code"] == "budget_reached"


def test_an_open_job_page_closes_finish_when_the_budget_runs_out(
    open_page, capped_quickly, fake_llm
):
    """A story the storyteller stopped mid-story offers Finish; the budget runs out
    elsewhere while its page is open: Finish closes, with the reason, without a reload."""
    url, database_url, nearly_all = capped_quickly
    fake_llm.mode = "no_finish"  # the stream ends with no finish reason: cut short, words kept
    with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
        job_id = http.post("/stories/generate", json={"prompt": "a fox who paints the moon"},
                           headers={"Idempotency-Key": uuid.uuid4().hex}).json()["job_id"]
    json_when(f"{url}/stories/jobs/{job_id}", lambda job: job["status"] == "failed",
              "the cut")
    page = open_page(url, "phone").page
    page.goto(f"{url}/stories/jobs/{job_id}")
    finish = page.get_by_role("button", name="Finish this story")
    expect(finish).to_be_enabled()
    spend(database_url, nearly_all)
    expect(finish).to_be_disabled(timeout=(2 * ROOM_POLL_S + 3) * 1000)
    expect(page.locator("#closed-note")).to_contain_text("no room for another story")
    page.screenshot(path=str(ARTIFACTS / "budget-closed-finish-phone.png"))


# A voice at its price: reading a story aloud costs something, so the budget can close it.
VOICE = Price(input_per_mtok=Decimal("2.5"), output_per_mtok=Decimal("10"),
              audio_output_per_mtok=Decimal("64"))


@pytest.fixture
def capped_with_every_control(settings, fake_llm):
    """`capped`, drawing and reading aloud at a price, with a story (its picture not drawn:
    Draw a picture and Listen are offered) and one the storyteller stopped mid-story (Finish
    this story, Start it again); its URL, database, what nearly uses the budget up, the
    story and the job cut short."""
    short = shortest_set_aside(settings)
    budget = 10 * short
    everything = replace(settings, prices=PRICES | {"fake-voice": VOICE},
                         monthly_budget_micros=budget, illustrator="openai",
                         image_model="fake-image", narrator="openai", voice_model="fake-voice")
    with served_over_http(everything) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
            def asked(prompt: str) -> int:
                return http.post("/stories/generate", json={"prompt": prompt}, headers={
                    "Idempotency-Key": uuid.uuid4().hex}).json()["job_id"]
            written = json_when(f"{url}/stories/jobs/{asked('a whale who hums')}",
                                lambda job: job["status"] == "completed", "the story")
            fake_llm.mode = "no_finish"  # ends with no finish reason: cut short, words kept
            cut = asked("a fox who paints the moon")
            json_when(f"{url}/stories/jobs/{cut}", lambda job: job["status"] == "failed",
                      "the cut")
        yield url, settings.database_url, budget - short // 2, written["story_id"], cut


def test_pages_opened_with_no_room_show_every_control_that_would_spend_closed_at_load(
    open_page, capped_with_every_control
):
    """The budget is used up before the pages are opened: the job page's Finish and Start
    it again, the story page's Draw a picture and Listen, the home page's card and the
    library's story cut short are closed as the pages come, each with the reason, not at
    the first check an open page makes (that check is kept from answering here)."""
    url, database_url, nearly_all, story_id, cut = capped_with_every_control
    spend(database_url, nearly_all)
    page = open_page(url, "phone").page
    # The open page's check learns nothing: what is closed is closed by the page as served.
    page.route("**/closed*", lambda route: route.fulfill(status=503))
    page.goto(f"{url}/stories/jobs/{cut}")
    card = page.locator(f"#job-{cut}")
    for name in ("Finish this story", "Start it again"):
        expect(card.get_by_role("button", name=name)).to_be_disabled()
    expect(card.get_by_text("no room for another story")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "budget-closed-at-load-job-phone.png"), full_page=True)
    page.goto(f"{url}/stories/{story_id}")
    for name in ("Draw a picture", "Listen"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_text("No more pictures this month")).to_be_visible()
    expect(page.get_by_text("Not read aloud this month")).to_be_visible()
    page.goto(url + "/")
    card = page.locator(f"#job-{cut}")
    expect(card.get_by_role("button", name="Finish this story")).to_be_disabled()
    expect(page.locator("#limit-note")).to_contain_text("no room for another story")
    page.goto(url + "/stories")
    row = page.locator(f"#unfinished-{cut}")
    expect(row.get_by_role("button", name="Finish")).to_be_disabled()
    expect(page.locator("#unfinished").get_by_text("no room for another story")).to_be_visible()



def test_an_open_home_page_closes_the_lengths_the_budget_no_longer_has_room_for(
    open_page, capped_quickly, settings
):
    """Room is left for a short story only, spent on another device while the home page is
    open: within a poll or two Medium and Long close, Short is chosen, the reason floats over
    the page's foot, and the form stays open for a short story."""
    url, database_url, _ = capped_quickly
    page = open_page(url, "phone").page
    page.goto(url + "/")
    medium_choice = page.locator("input[name=length][value=medium]")
    expect(medium_choice).to_be_checked()
    # The budget (room for ten short stories) is left with room for a short one, not a medium.
    meter = meter_for(replace(settings, prices=PRICES, monthly_budget_micros=1))
    short, medium = (meter.story_set_aside(StoryRequest(prompt="", length=length))
                     for length in ("short", "medium"))
    spend(database_url, 10 * short - (short + medium) // 2)
    within = {"timeout": (2 * ROOM_POLL_S + 3) * 1000}
    expect(medium_choice).to_be_disabled(**within)
    expect(page.locator("input[name=length][value=long]")).to_be_disabled()
    expect(page.locator("input[name=length][value=short]")).to_be_checked()
    expect(page.locator("#closed-note")).to_contain_text("room for shorter stories only")
    expect(page.get_by_role("button", name="Write the story")).to_be_enabled()
    expect(page.locator("#prompt")).to_be_enabled()
