"""Loose ends of an evening, in a real browser: a refused idea's message goes once the idea
is changed (never a stale "Please write a few words…" under "520 of 500 characters"), and
a compact card's long title ends in an ellipsis on a phone, never cut mid-letter.
Screenshots in test-artifacts/."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import ARTIFACTS, needs_chromium, served_over_http
from tests.helpers.waits import HTTP_TIMEOUT_S, WAIT_S

pytestmark = needs_chromium

LONG_TITLE = "The Owl Who Knitted Scarves for the Moon and All the Sleepy Stars Above the Sea"


@pytest.fixture
def app(settings, fake_llm):
    fake_llm.story = f"{LONG_TITLE}\n\nOnce upon a time an owl knitted.\n\nThe end."
    with served_over_http(settings) as url:
        yield url


def test_a_refused_idea_s_message_goes_once_the_idea_is_changed(open_page, app):
    page = open_page(app, "phone").page
    page.goto(app + "/")
    page.fill("#prompt", "   ")  # passes `required`; the server refuses it
    page.get_by_role("button", name="Write the story").click()
    refused = page.locator("#prompt-error")
    expect(refused).to_contain_text("Please write a few words")
    expect(page.locator("#prompt")).to_be_focused()  # the refusal, brought into view
    page.fill("#prompt", "x" * 520)
    expect(page.locator("[data-char-count]")).to_contain_text("520 of 500 characters")
    expect(refused).to_have_count(0)
    assert page.locator("#prompt").get_attribute("aria-invalid") is None
    page.screenshot(path=str(ARTIFACTS / "form-stale-message-cleared-phone.png"))


def test_a_compact_card_s_long_title_ends_in_an_ellipsis_on_a_phone(open_page, app):
    with httpx.Client(base_url=app, timeout=HTTP_TIMEOUT_S) as http:
        job_id = http.post("/stories/generate", json={"prompt": "an owl who knits"},
                           headers={"Idempotency-Key": uuid.uuid4().hex}).json()["job_id"]
        for _ in range(int(WAIT_S * 20)):
            status = http.get(f"/stories/jobs/{job_id}",
                              headers={"Accept": "application/json"}).json()["status"]
            if status == "completed":
                break
            time.sleep(0.05)
    page = open_page(app, "phone").page
    page.goto(app + "/")
    title = page.locator(".job-compact .job-line-title").first
    expect(title).to_be_visible()
    # The title's own box clips it with an ellipsis (a box clipped whole, as every link's
    # inline-flex is, cuts a letter in half), and it is still a tap tall.
    assert title.evaluate("a => a.scrollWidth > a.clientWidth")  # longer than the line
    assert title.evaluate("a => getComputedStyle(a).textOverflow") == "ellipsis"
    assert title.evaluate("a => getComputedStyle(a).display") == "block"
    assert title.bounding_box()["height"] >= 44
    page.screenshot(path=str(ARTIFACTS / "compact-title-ellipsis-phone.png"))
