"""The story form in a real browser (issue 29, items 8 and 10), at its three sizes: the
chooser says whom a typed idea is for and a one-tap story leaves it alone; the idea is
counted and never cut; a sequel opens at its note and follows the language chosen; the
one-tap buttons are even, in a bounded block; sign out asks first, and the sign-in page
shows the password and the tries left.

Screenshots go to test-artifacts/story-form-*-<size>.png.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    ARTIFACTS,
    SIZES,
    STORY_WAIT_MS,
    app_of_its_own,
    app_writing_with,
    needs_chromium,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.waits import HTTP_TIMEOUT_S, json_when

pytestmark = needs_chromium

PASSWORD = "moonbeam"
CHILDREN = ({"name": "Mia", "age": 5, "language": "en"},
            {"name": "Leo", "age": 7, "language": "es"},
            {"name": "Ada", "age": 3, "language": "en"})
JSON_POST = {"Content-Type": "application/json"}
PROMPT_LABEL = "What should tonight's story be about?"


@pytest.fixture(scope="module")
def form_app(pg_url: str, fake_llm_server: FakeLLM,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_writing_with(pg_url, tmp_path_factory.mktemp("story-form"),
                          fake_llm_server.url) as url:
        yield url


@pytest.fixture(scope="module")
def children(form_app: str) -> dict[str, int]:
    """Three children's profiles: six one-tap buttons (three each, three pairs)."""
    made = {}
    for child in CHILDREN:
        response = httpx.post(form_app + "/children", json=child, timeout=HTTP_TIMEOUT_S)
        assert response.status_code == 201, response.text
        made[child["name"]] = response.json()["child_id"]
    return made


@pytest.fixture(scope="module")
def household(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("story-form-household"),
                        household_password=PASSWORD) as url:
        yield url


def shot(page, name: str, size: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"story-form-{name}-{size}.png"))


def user_prompt(fake_llm: FakeLLM, job_id: int) -> str:
    calls = [call for call in fake_llm.requests if call["job_id"] == str(job_id)]
    assert len(calls) == 1, calls
    return calls[0]["body"]["messages"][-1]["content"]


def card_of(page, text: str):
    """The newest card whose idea holds `text`, once its story is there; and its job id."""
    card = page.locator("#jobs .job-card", has_text=text).first
    expect(card.locator(".story-text.job-story")).to_be_visible(timeout=STORY_WAIT_MS)
    return card, int(card.get_attribute("id").removeprefix("job-"))


def written(url: str, body: dict) -> dict:
    """A story written over the JSON API (setting the scene): its JSON."""
    response = httpx.post(url + "/stories/generate", json=body, timeout=HTTP_TIMEOUT_S,
                          headers={**JSON_POST, "Idempotency-Key": uuid.uuid4().hex})
    assert response.status_code == 202, response.text
    job = json_when(f"{url}/stories/jobs/{response.json()['job_id']}",
                    lambda job: job["status"] in ("completed", "failed"), "the story")
    assert job["status"] == "completed", job
    return httpx.get(f"{url}/stories/{job['story_id']}", headers={"Accept": "application/json"},
                     timeout=HTTP_TIMEOUT_S).json()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_typed_idea_after_a_one_tap_story_goes_out_for_the_child_in_the_chooser(
    open_page, form_app, children, fake_llm, size
):
    watched = open_page(form_app, size)
    page = watched.page
    page.goto(form_app + "/")
    page.locator("label.for-choice", has_text="Mia").click()
    expect(page.get_by_role("radio", name=re.compile(r"^Mia\b"))).to_be_checked()
    expect(page.locator("#child_name")).to_be_hidden()  # the boxes are someone else's
    page.fill("#prompt", f"a quiet pond ({size})")
    page.get_by_role("button", name="Write the story").click()
    card, _ = card_of(page, f"a quiet pond ({size})")
    expect(card.locator(".job-for")).to_have_text("for Mia")

    # Leo's one-tap story: his, on its own page.
    page.get_by_role("button", name="Tonight, for Leo").click()
    page.wait_for_url(re.compile(r"/stories/jobs/\d+$"))
    expect(page.locator(".job-card .job-for")).to_have_text("for Leo")

    # Back home, the chooser still says Mia, and a typed idea is hers.
    page.goto(form_app + "/")
    mia = page.get_by_role("radio", name=re.compile(r"^Mia\b"))
    expect(mia).to_be_checked()
    expect(page.get_by_role("radio", name=re.compile(r"^Leo\b"))).not_to_be_checked()
    mia.scroll_into_view_if_needed()
    shot(page, "chooser-after-one-tap", size)
    page.fill("#prompt", f"a kite that naps ({size})")
    page.get_by_role("button", name="Write the story").click()
    card, job_id = card_of(page, f"a kite that naps ({size})")
    expect(card.locator(".job-for")).to_have_text("for Mia")
    prompt = user_prompt(fake_llm, job_id)
    assert "<name>Mia</name>" in prompt and "Leo" not in prompt
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_the_one_tap_buttons_are_even_in_a_bounded_block(open_page, form_app, children, size):
    watched = open_page(form_app, size)
    page = watched.page
    page.goto(form_app + "/")
    buttons = page.locator(".child-buttons button")
    expect(buttons).to_have_count(6)
    boxes = [buttons.nth(n).bounding_box() for n in range(6)]
    widths = {round(box["width"]) for box in boxes}
    heights = {round(box["height"]) for box in boxes}
    assert max(widths) - min(widths) <= 1, widths
    assert max(heights) - min(heights) <= 1, heights
    block = page.locator(".child-buttons").bounding_box()
    viewport = SIZES[size]
    assert block["height"] <= viewport["height"] / 3, block  # a third of the screen at most
    assert block["y"] + block["height"] <= viewport["height"] * 0.6, block
    shot(page, "one-tap-grid", size)
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_long_paste_is_counted_kept_and_refused_until_it_fits(open_page, form_app, size):
    watched = open_page(form_app, size)
    page = watched.page
    page.goto(form_app + "/")
    counter = page.locator("#prompt-count")
    expect(counter).to_have_text("0 of 500 characters")
    pasted = "a dragon who hums softly " * 24  # 600 characters, 599 once trimmed
    page.fill("#prompt", pasted)
    assert page.locator("#prompt").input_value() == pasted  # nothing cut
    expect(counter).to_have_text("599 of 500 characters: please make it 99 shorter.")
    cards = page.locator("#jobs .job-card").count()
    page.get_by_role("button", name="Write the story").click()
    message = page.locator("#prompt").evaluate("box => box.validationMessage")
    assert "Please make it 99 shorter." in message
    page.wait_for_timeout(300)
    assert page.locator("#jobs .job-card").count() == cards  # nothing sent
    shot(page, "counter-over", size)
    page.fill("#prompt", "z" * 500)
    expect(counter).to_have_text("500 of 500 characters")
    assert page.locator("#prompt").evaluate("box => box.validationMessage") == ""
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_sequel_opens_at_its_note_and_follows_the_language_chosen(
    open_page, form_app, fake_llm, size
):
    story = written(form_app, {"prompt": f"an owl who reads ({size})"})
    watched = open_page(form_app, size)
    page = watched.page
    page.goto(f"{form_app}/stories/{story['story_id']}")
    page.get_by_role("link", name="What happens next?").click()
    page.wait_for_url(re.compile(r"/\?sequel=\d+#story-form$"))
    expect(page.locator(".sequel-note")).to_be_in_viewport()
    expect(page.get_by_text(PROMPT_LABEL)).to_be_in_viewport()
    prompt = page.locator("#prompt")
    expect(prompt).to_have_value(f"what happens next in “{story['title']}”")
    shot(page, "sequel-opens-at-its-note", size)
    page.get_by_label("Language", exact=True).select_option(label="Français")
    expect(prompt).to_have_value(f"la suite de « {story['title']} »")
    page.get_by_role("button", name="Write the story").click()
    card, job_id = card_of(page, "la suite de")
    expect(card.locator(".story-text.job-story")).to_have_attribute("lang", "fr")
    assert "Write the story in French." in user_prompt(fake_llm, job_id)
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_sign_out_asks_first_and_sign_in_shows_the_password_and_tries_left(
    open_page, household, size
):
    watched = open_page(household, size)
    page = watched.page
    page.goto(household + "/login")
    password = page.locator("#password")
    password.fill("a guess")
    page.get_by_label("Show password").check()
    expect(password).to_have_attribute("type", "text")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".tries-left")).to_have_text(re.compile(r"\d more tr(y|ies) before"))
    shot(page, "tries-left", size)
    page.locator("#password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(household + "/")

    sign_out = page.locator(".sign-out summary")
    expect(sign_out.locator(".when-closed")).to_be_visible()
    expect(sign_out.locator(".when-closed")).to_have_text("Sign out…")
    sign_out.click()
    confirm = page.get_by_role("button", name="Yes, sign out")
    expect(confirm).to_be_in_viewport()
    shot(page, "sign-out-asks", size)
    assert page.url == household + "/"  # one tap asked, signed nobody out
    confirm.click()
    page.wait_for_url(re.compile(r"/login$"))
    # The wrong password's answer is a 401, as it should be: the browser notes it.
    assert [problem for problem in watched.problems if "status of 401" not in problem] == []
