"""A reading view that never jumps, in a real browser at a tablet's size (upright and on
its side) and a phone's: after "Write the story" the new card comes into view at once, its
draft grows in the story's type, and when the story is finished the text stays where it
was (the actions appear after it), so a parent reading along keeps the place; the newest
stories gain it without a reload.

Runs the Debian chromium at /usr/bin/chromium through Playwright; see tests/helpers/browser.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    font_of,
    needs_chromium,
    read_attached,
    request_story,
    served_over_http,
    settled_scroll,
    top_of_paragraph,
)
from tests.helpers.fake_llm import FakeLLM

pytestmark = needs_chromium

LINE_PX = 40  # about one line of the story's type
READY_WAIT_MS = 20_000
TITLE = "The Lantern Fox"
PARAGRAPHS = [
    " ".join(f"{word}{n}" for n in range(50))
    for word in ("hush", "moss", "owl", "fern", "star")
]  # 250 words, five paragraphs
STORY = TITLE + "\n\n" + "\n\n".join(PARAGRAPHS)


@pytest.fixture
def tablet_or_phone(request, browser):
    """A page at the size asked for, in a fresh context of the module's Chromium."""
    width, height = request.param
    problems: list[str] = []
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    try:
        yield page, f"{width}x{height}", problems
    finally:
        context.close()


@pytest.mark.parametrize("tablet_or_phone", [(820, 1180), (1180, 820), (390, 844)],
                         indirect=True, ids=["tablet", "tablet-landscape", "phone"])
def test_the_story_stays_where_it_was_read_when_it_is_finished(
    settings, fake_llm: FakeLLM, tablet_or_phone
):
    page, size, problems = tablet_or_phone
    chunks = len(re.findall(r"\S*\s*", STORY)) // 2
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.01  # streamed, a couple of words at a time ...
    fake_llm.hold_after_chunks = chunks - 1  # ... all but the last two words, then it waits
    fake_llm.hold()
    with served_over_http(replace(settings, llm_timeout_s=60, card_poll_s=CARD_POLL_S)) as url:
        page.goto(url + "/")
        page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page
        # No scroll anchoring, as in Safari (an iPad): the layout itself must not move.
        page.evaluate("document.documentElement.style.overflowAnchor = 'none';"
                      " document.body.style.overflowAnchor = 'none'")
        assert "No stories yet" in page.locator("#newest-stories").inner_text()
        page.fill("#prompt", "a fox with a lantern")
        job_id = "job-" + request_story(page)
        card = page.locator(f"#{job_id}")

        # The new card is in view at once (the form above it scrolled away).
        settled_scroll(page)
        top = read_attached(card, "c => c.getBoundingClientRect().top")
        assert 0 <= top < page.viewport_size["height"] / 4, top

        # The draft grows, in the story page's type.
        draft = card.locator(".story-text.job-draft")
        draft.get_by_text(PARAGRAPHS[-2]).wait_for(timeout=READY_WAIT_MS)
        font = font_of(page, f"#{job_id} .story-text.job-draft")
        assert "Palatino" in font or "Iowan" in font, font
        page.screenshot(path=str(ARTIFACTS / f"reading-view-draft-{size}.png"))

        # A parent reads along: the middle of the draft at the top of the screen.
        middle = read_attached(draft, "d => { const r = d.getBoundingClientRect();"
                                      " return window.scrollY + r.top + r.height / 2; }")
        page.evaluate(f"window.scrollTo(0, {middle})")
        before = settled_scroll(page)
        assert before > 0
        line_before = top_of_paragraph(page, f"#{job_id} .story-text.job-draft", PARAGRAPHS[2])

        fake_llm.release()  # the story is finished
        card.get_by_role("link", name="Read the story").wait_for(timeout=READY_WAIT_MS)
        after = settled_scroll(page)
        story = card.locator(".story-text")
        line_after = story.get_by_text(PARAGRAPHS[2]).evaluate(
            "p => p.getBoundingClientRect().top")
        page.screenshot(path=str(ARTIFACTS / f"reading-view-finished-{size}.png"))
        print(f"{size}: scrollY {before} -> {after}; the middle paragraph's top "
              f"{line_before:.1f} -> {line_after:.1f}")
        assert abs(after - before) < LINE_PX
        assert abs(line_after - line_before) < LINE_PX

        # The whole story, where the draft was; the card polls no more.
        assert story.locator(".job-title").inner_text() == TITLE
        assert story.locator("p:not(.job-title)").all_inner_texts() == PARAGRAPHS
        assert card.get_attribute("hx-trigger") is None and card.get_attribute("hx-get") is None

        # The newest stories are no longer empty, without a reload, and do not list it
        # twice: its card is on the page, the library a tap away.
        shelf = page.locator("#newest-stories")
        shelf.get_by_role("link", name="All stories in the library").wait_for(timeout=5_000)
        assert "No stories yet" not in shelf.inner_text()
        assert TITLE not in shelf.inner_text()
        assert page.evaluate("window.__sameDocument") is True
        page.screenshot(path=str(ARTIFACTS / f"reading-view-shelf-{size}.png"), full_page=True)
    assert problems == []
