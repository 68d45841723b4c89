"""The household's path in a real browser, under the strict CSP: sign in once, ask for a
story with htmx, read it, sign out, with no console errors and no CSP violations.

Runs the Debian chromium at /usr/bin/chromium through Playwright (never a downloaded
browser); see tests/helpers/browser.py.
"""

from __future__ import annotations

from dataclasses import replace

from app.config import Settings
from tests.helpers.browser import CARD_POLL_S, needs_chromium, served_over_http

PASSWORD = "moonbeam"

pytestmark = needs_chromium


def test_household_path_works_under_the_csp(settings: Settings, browser) -> None:
    app_settings = replace(settings, household_password=PASSWORD, allow_open=False,
                           card_poll_s=CARD_POLL_S)
    problems: list[str] = []
    with served_over_http(app_settings) as base_url:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.add_init_script(
                "document.addEventListener('securitypolicyviolation', e => "
                "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
            )

            page.goto(base_url + "/")
            assert page.url.startswith(base_url + "/login")
            page.fill("#password", PASSWORD)
            page.click(".sign-in-form button[type=submit]")  # not the header's menu
            page.wait_for_url(base_url + "/")
            assert page.is_visible("text=Sign out")
            # htmx comes with the first tap or key (app.js), from /static/, not blocked.
            assert page.evaluate("typeof htmx") == "undefined"
            page.fill("#prompt", "a hedgehog who counts the stars")
            page.wait_for_function("() => typeof htmx === 'object'")
            page.click("text=Write the story")
            page.wait_for_selector("#jobs .job-card")  # swapped in by htmx, no reload
            assert page.url == base_url + "/"
            page.wait_for_selector("#jobs >> text=Read the story", timeout=15_000)
            page.click("#jobs >> text=Read the story")
            page.wait_for_selector("article.story h1")

            page.click("text=Sign out…")  # it asks first (issue 29)
            page.click("text=Yes, sign out")
            page.wait_for_url(base_url + "/login")
            page.goto(base_url + "/stories")
            assert page.url.startswith(base_url + "/login")
        finally:
            context.close()
    assert problems == []
