"""Polling survives errors, in a real browser: the page talks to the app through a small
reverse proxy that plays a PaaS router. While a story is being written the router answers
503 "Application error" pages for a while, or refuses connections (the app stopped); the
status card stays, keeps polling (slower, saying "Reconnecting…"), and shows "Read the
story" without a reload once the router is back. "Try again", the favourite star and the
story form keep their place too.

Runs the Debian chromium at /usr/bin/chromium through Playwright; see tests/helpers/browser.py.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
import uvicorn
from playwright.sync_api import expect
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, Router

from app.config import Settings
from tests.helpers.browser import (
    CARD_POLL_S,
    REPORT_CSP,
    needs_chromium,
    served_over_http,
    story_bar,
)
from tests.helpers.fake_llm import FakeLLM, free_port

pytestmark = needs_chromium

# app.js: the note at the first failed poll; after three in a row, polls 5/3 as far apart:
# at the contract's pace, every 3 s -> every 5 s (the router's 503 pages); at the tests'
# pace of a second, every 1.7 s (the others). Both well inside these waits.
BACKED_OFF = {3.0: "every 5s", CARD_POLL_S: f"every {round(CARD_POLL_S * 5 / 3, 1):g}s"}
NOTE_WAIT_MS = 20_000
RECOVERY_WAIT_MS = 20_000
LLM_TIMEOUT_S = 60
ROUTER_PAGE = (
    "<!DOCTYPE html><html><head><title>Application Error</title></head><body>"
    "<h1>Application error</h1><p>An error occurred in the application and your page could "
    "not be served. Please try again in a few moments.</p></body></html>"
)
# Headers that belong to one hop, not to the answer.
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length",
              b"content-encoding", b"upgrade", b"te", b"trailer", b"proxy-connection"}
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]


class Router503:
    """A reverse proxy on a free loopback port, in front of the app.

        proxy.failing = True     # every request: 503 and a router's own error page
        proxy.stop()             # nothing listens: connections are refused
        proxy.start()            # listening again, on the same port

    The Host header goes through unchanged, so the app sees its own origin on form posts.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.failing = False
        self.failed = 0  # requests answered with the router's page
        self._app = Router(routes=[Route("/{path:path}", self._forward, methods=METHODS)])
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    async def _forward(self, request: Request) -> Response:
        if self.failing:
            self.failed += 1
            return HTMLResponse(ROUTER_PAGE, status_code=503)
        headers = [(k, v) for k, v in request.headers.raw if k not in HOP_BY_HOP]
        async with httpx.AsyncClient() as client:
            answer = await client.request(
                request.method, self.upstream + request.url.path,
                params=request.url.query, headers=headers, content=await request.body(),
            )
        response = Response(answer.content, status_code=answer.status_code)
        response.raw_headers += [(k, v) for k, v in answer.headers.raw
                                 if k.lower() not in HOP_BY_HOP]
        return response

    def start(self) -> None:
        config = uvicorn.Config(self._app, host="127.0.0.1", port=self.port, lifespan="off",
                                log_level="warning", timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the proxy did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "the proxy did not stop"


@contextlib.contextmanager
def behind_a_router(settings: Settings, poll_s: float = CARD_POLL_S) -> Iterator[Router503]:
    # The fake LLM is held through the outage: longer than the usual test timeout.
    with served_over_http(replace(settings, llm_timeout_s=LLM_TIMEOUT_S,
                                  card_poll_s=poll_s)) as app_url:
        proxy = Router503(app_url)
        proxy.start()
        try:
            yield proxy
        finally:
            if proxy._thread is not None and proxy._thread.is_alive():
                proxy.stop()


@pytest.fixture
def open_page(browser):
    """Pages in a fresh context of the module's Chromium, and the list where their script
    errors and CSP violations land."""
    problems: list[str] = []
    context = browser.new_context(viewport={"width": 820, "height": 1180})

    def open_one():
        page = context.new_page()
        # Failed loads (503, refused) are logged to the console on purpose: only script
        # errors and CSP violations count as problems here.
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda m: m.text.startswith("CSP violation")
                and problems.append(m.text))
        page.add_init_script(REPORT_CSP)
        return page

    try:
        yield open_one, problems
    finally:
        context.close()


@pytest.fixture
def held_llm(fake_llm: FakeLLM) -> Iterator[FakeLLM]:
    """The fake LLM, held: the story is being written until the test releases it."""
    fake_llm.hold()
    try:
        yield fake_llm
    finally:
        fake_llm.release()


def request_story(page, prompt: str):
    """Ask for a story on the home page; its card, swapped in without a reload, and its id."""
    page.fill("#prompt", prompt)
    page.get_by_role("button", name="Write the story").click()
    card = page.locator("#jobs .job-card", has_text=prompt)
    card.wait_for(state="attached")
    return card, int(card.get_attribute("id").removeprefix("job-"))


def assert_still_polling_slowly(card, job_id: int, poll_s: float = CARD_POLL_S) -> None:
    card.locator("[data-reconnecting][role=status]", has_text="Reconnecting").wait_for(
        timeout=NOTE_WAIT_MS
    )
    assert card.get_attribute("hx-get") == f"/stories/jobs/{job_id}"
    assert card.get_attribute("hx-swap") == "outerHTML"
    # Backed off from the server's pace, after three failures.
    expect(card).to_have_attribute("hx-trigger", BACKED_OFF[poll_s], timeout=NOTE_WAIT_MS)
    assert "status-running" in card.get_attribute("class")  # the same card, as it was


def assert_finished_without_a_reload(page, card) -> None:
    card.get_by_role("link", name="Read the story").wait_for(timeout=RECOVERY_WAIT_MS)
    assert card.locator("[data-reconnecting]").count() == 0
    assert card.get_attribute("hx-trigger") is None and card.get_attribute("hx-get") is None
    assert page.evaluate("window.__sameDocument") is True


def test_a_card_keeps_polling_through_a_routers_503_pages(settings, held_llm, open_page):
    open_one, problems = open_page
    with behind_a_router(settings, poll_s=3.0) as proxy:  # the contract's pace
        page = open_one()
        page.goto(proxy.url + "/")
        page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page
        card, job_id = request_story(page, "a lighthouse keeper's sleepy cat")
        held_llm.wait_for_call(job_id)  # running: the card polls every 3 s
        expect(card).to_have_attribute("hx-trigger", "every 3s")
        story_bar(card).wait_for()

        proxy.failing = True
        assert_still_polling_slowly(card, job_id, poll_s=3.0)
        assert proxy.failed >= 3  # the polls met the router's page ...
        assert page.get_by_text("Application error").count() == 0  # ... and never showed it
        assert page.locator("#jobs .job-card").count() == 1

        held_llm.release()  # the story is finished while the router still fails
        proxy.failing = False
        assert_finished_without_a_reload(page, card)
    assert problems == []


def test_a_card_keeps_polling_while_the_app_refuses_connections(settings, held_llm, open_page):
    open_one, problems = open_page
    with behind_a_router(settings) as proxy:
        page = open_one()
        page.goto(proxy.url + "/")
        page.evaluate("window.__sameDocument = true")
        card, job_id = request_story(page, "a snail who races the moon")
        held_llm.wait_for_call(job_id)
        story_bar(card).wait_for()

        proxy.stop()  # the app "stopped": nothing listens on its address
        assert_still_polling_slowly(card, job_id)
        assert page.locator("#jobs .job-card").count() == 1

        # Back: the next poll brings the server's card again, at its pace and without the note.
        proxy.start()
        card.locator("[data-reconnecting]").wait_for(state="detached", timeout=RECOVERY_WAIT_MS)
        assert card.get_attribute("hx-trigger") == f"every {CARD_POLL_S:g}s"
        assert "status-running" in card.get_attribute("class")
        held_llm.release()
        assert_finished_without_a_reload(page, card)
    assert problems == []


def test_buttons_keep_their_place_when_the_router_fails(settings, fake_llm, open_page):
    open_one, problems = open_page
    with behind_a_router(settings) as proxy:
        page = open_one()
        page.goto(proxy.url + "/")
        page.evaluate("window.__sameDocument = true")

        # The story form: its text is kept and it says the tap did not get through.
        proxy.failing = True
        page.fill("#prompt", "a fox who knits scarves")
        page.get_by_role("button", name="Write the story").click()
        form = page.locator("form", has=page.locator("#prompt"))
        form.get_by_role("alert").filter(has_text="didn’t get through").wait_for()
        assert page.locator("#prompt").input_value() == "a fox who knits scarves"
        assert page.get_by_role("button", name="Write the story").is_enabled()
        assert page.locator("#jobs .job-card").count() == 0

        # "Try again" on a failed card: the card stays, with the same sentence in it.
        proxy.failing = False
        fake_llm.mode = "500"
        card, failed = request_story(page, "a fox who knits scarves")
        try_again = card.get_by_role("button", name="Try again")
        try_again.wait_for(timeout=RECOVERY_WAIT_MS)
        proxy.failing = True
        try_again.click()
        card.get_by_role("alert").filter(has_text="didn’t get through").wait_for()
        assert "status-failed" in card.get_attribute("class")
        assert try_again.is_enabled()
        assert page.get_by_text("Application error").count() == 0

        # Once the router is back the same button works, and the sentence goes away.
        proxy.failing = False
        fake_llm.mode = "ok"
        try_again.click()
        retried = page.locator("#jobs .job-card", has_text="a fox who knits scarves").first
        retried.get_by_role("link", name="Read the story").wait_for(timeout=RECOVERY_WAIT_MS)
        assert page.get_by_text("didn’t get through").count() == 0
        assert page.evaluate("window.__sameDocument") is True
        assert retried.get_attribute("id") != f"job-{failed}"  # a new job took its place

        # The favourite star: it stays unpressed and says so, then works.
        retried.get_by_role("link", name="Read the story").click()
        page.wait_for_url(f"{proxy.url}/stories/*")
        star = page.get_by_role("button", name="Favourite")
        page.evaluate("window.__sameDocument = true")
        proxy.failing = True
        star.click()
        page.get_by_role("alert").filter(has_text="didn’t get through").wait_for()
        assert star.get_attribute("aria-pressed") == "false"
        assert page.get_by_text("Application error").count() == 0
        proxy.failing = False
        star.click()
        page.locator("button.favourite[aria-pressed='true']").wait_for()
        assert page.get_by_text("didn’t get through").count() == 0
        assert page.evaluate("window.__sameDocument") is True
    assert problems == []
