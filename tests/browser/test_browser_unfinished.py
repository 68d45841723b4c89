"""A story cut short is never lost from view, in a real browser at the three sizes: stopped
on the home page, it is listed "Not finished yet" in the library (its search finds it) with
Finish and Dismiss, each in reach; Dismiss says so in place with an Undo, deletes nothing,
and after a reload the library still finds it (its search too), to bring back.
Screenshots in test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    ARTIFACTS,
    SIZES,
    STORY_WAIT_MS,
    app_of_its_own,
    needs_chromium,
    overflows,
    request_story,
)
from tests.helpers.ids import duplicate_ids_on

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def slow(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo storyteller, a story in 30 s: long enough to stop one half-way."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("unfinished"), allow_open=True,
                        demo_delay_s=30, worker_concurrency=3) as url:
        yield url


@pytest.mark.parametrize("size", list(SIZES))
def test_a_stopped_story_waits_in_the_library_until_finished_or_dismissed(
    open_page, slow, size
):
    watched = open_page(slow, size)
    page = watched.page
    page.goto(slow + "/")
    idea = f"a moth who reads by moonlight ({size})"
    page.fill("#prompt", idea)
    card = page.locator("#job-" + request_story(page))
    expect(card.locator(".job-draft p").first).to_be_visible(timeout=STORY_WAIT_MS)
    card.locator(".job-stop > summary").click()
    card.get_by_role("button", name="Yes, stop it").click()
    expect(card.get_by_role("button", name="Finish this story")).to_be_visible(
        timeout=STORY_WAIT_MS)

    page.goto(slow + "/stories")
    row = page.locator("#unfinished li", has_text=idea)
    expect(page.get_by_role("heading", name="Not finished yet")).to_be_visible()
    expect(row).to_be_visible()
    for name in ("Finish", "Dismiss"):
        button = row.get_by_role("button", name=name)
        expect(button).to_be_visible()
        assert button.bounding_box()["height"] >= 44
    assert not overflows(page) and duplicate_ids_on(page) == []
    page.screenshot(path=str(ARTIFACTS / f"unfinished-library-{size}.png"), full_page=True)
    # Found by the library's search, as a story on the shelf is.
    # The row is on the page before the search too: wait for the search's own answer (it
    # replaces the list), or a late one would replace the list again after Dismiss.
    with page.expect_response(lambda response: "q=moonlight" in response.url):
        page.fill("#q", "moonlight")
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)
    expect(page.locator("#library-results #unfinished li", has_text=idea)).to_be_visible()

    listed = page.locator(".unfinished > .unfinished-list")
    row = listed.locator("li", has_text=idea)
    row.get_by_role("button", name="Dismiss").click()
    said = listed.locator(".unfinished-dismissed")
    expect(said).to_contain_text("Dismissed.")
    expect(row).to_have_count(0)
    # Nothing gone by one tap: its Undo is where Dismiss was, and brings the row back.
    undo = said.get_by_role("button", name="Undo")
    expect(undo).to_be_visible()
    assert undo.bounding_box()["height"] >= 44
    page.screenshot(path=str(ARTIFACTS / f"unfinished-undo-{size}.png"), full_page=True)
    undo.click()
    expect(row.get_by_role("button", name="Dismiss")).to_be_visible()
    expect(said).to_have_count(0)
    row.get_by_role("button", name="Dismiss").click()
    expect(said.get_by_role("button", name="Undo")).to_be_visible()

    # After a reload: off the list, yet the library keeps it, out of the way, to bring back.
    page.goto(slow + "/stories")
    expect(row).to_have_count(0)
    put_away = page.locator("details.unfinished-put-away")
    expect(put_away.locator("summary")).to_have_text(re.compile(r"Dismissed \(\d+\)"))
    put_away.locator("summary").click()
    kept = put_away.locator("li", has_text=idea)
    expect(kept).to_be_visible()
    # And its search finds it, shown at once.
    page.goto(slow + "/stories")
    with page.expect_response(lambda response: "q=moonlight" in response.url):
        page.fill("#q", "moonlight")
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)
    bring_back = kept.get_by_role("button", name="Bring back")
    expect(bring_back).to_be_visible()
    assert bring_back.bounding_box()["height"] >= 44
    assert not overflows(page) and duplicate_ids_on(page) == []
    page.screenshot(path=str(ARTIFACTS / f"unfinished-dismissed-found-{size}.png"), full_page=True)
    bring_back.click()
    page.wait_for_url(re.compile(r"/stories#unfinished-\d+$"))
    expect(row.get_by_role("button", name="Finish")).to_be_visible()
    expect(kept).to_have_count(0)
    assert watched.problems == []

    # Without JavaScript, the same: the page comes back saying so, with its Undo.
    plain = open_page(slow, size, java_script_enabled=False).page
    plain.goto(slow + "/stories")
    listed = plain.locator(".unfinished > .unfinished-list")
    listed.locator("li", has_text=idea).get_by_role("button", name="Dismiss").click()
    plain.wait_for_url(re.compile(r"/stories\?dismissed=\d+#unfinished$"))
    expect(listed.locator("li", has_text=idea)).to_have_count(0)
    expect(listed.locator(".unfinished-dismissed")).to_contain_text("Dismissed.")
    listed.locator(".unfinished-dismissed").get_by_role("button", name="Undo").click()
    plain.wait_for_url(re.compile(r"/stories$"))
    again = listed.locator("li", has_text=idea)
    expect(again.get_by_role("button", name="Dismiss")).to_be_visible()
