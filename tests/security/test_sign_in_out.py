"""Signing in and out at bedtime (issue 29, item 10): sign out asks once before it signs
this device out, and the sign-in page shows the password on request and, after a wrong
one, how many tries are left before the wait."""

from __future__ import annotations

import re

import pytest

from app.security.limits import LoginAttempt, LoginLimiter
from tests.helpers.app import PASSWORD, SAME_ORIGIN, serve, sign_in

pytestmark = pytest.mark.anyio


@pytest.fixture
def household_app(make_app):
    return make_app(household_password=PASSWORD, api_token="t", allow_open=False)


@pytest.mark.slow
async def test_sign_out_asks_first(household_app):
    async with serve(household_app) as http:
        await sign_in(http)
        home = (await http.get("/")).text
        nav = re.search(r'<nav aria-label="Main">.*?</nav>', home, re.S).group()
        # A closed question: "Sign out…" opens it, and only its button posts.
        asked = re.search(r'<details class="confirm sign-out"[^>]*>\s*<summary[^>]*>'
                          r'<span class="when-closed">Sign out…</span>.*?</details>', nav, re.S)
        assert asked, nav
        assert 'action="/logout"' in asked.group()
        assert ">Yes, sign out</button>" in asked.group()
        assert nav.count('action="/logout"') == 1  # no one-tap sign-out beside it
        response = await http.post("/logout", headers=SAME_ORIGIN)
        assert response.status_code == 303
        assert (await http.get("/")).status_code == 303


async def test_the_sign_in_page_can_show_the_password(household_app):
    async with serve(household_app) as http:
        page = (await http.get("/login")).text
        # Shown by app.js (which flips the box's type), so hidden without it.
        assert re.search(r'<label class="show-password" data-show-password hidden>'
                         r'<input type="checkbox"> Show password</label>', page)


async def test_a_wrong_password_says_how_many_tries_are_left(household_app):
    async with serve(household_app) as http:
        said = []
        for _ in range(5):
            response = await sign_in(http, password="guess")
            assert response.status_code == 401
            said.append(re.search(r'<span class="tries-left">([^<]+)</span>',
                                  response.text).group(1))
        assert said == ["4 more tries before a short wait.", "3 more tries before a short wait.",
                        "2 more tries before a short wait.", "1 more try before a short wait.",
                        "That was the last try for now: the next one has to wait 1 minute."]
        assert (await sign_in(http)).status_code == 429  # as it said


async def test_the_tries_left_are_the_fewest_of_any_count(db):
    limiter = LoginLimiter(max_failures=5, app_max_failures=3, device_max_failures=10)
    admitted = await limiter.admission(db, LoginAttempt("198.51.100.1"))
    assert (admitted.wait_s, admitted.tries_left) == (None, 2)  # the app's ceiling is nearer
    assert 1 <= admitted.resets_in_s <= 15 * 60
    device = await limiter.admission(db, LoginAttempt("198.51.100.1", device="tablet"))
    assert (device.wait_s, device.tries_left) == (None, 9)  # a known device: its own count
    for _ in range(2):
        await limiter.admission(db, LoginAttempt("198.51.100.2"))
    refused = await limiter.admission(db, LoginAttempt("198.51.100.3"))
    assert refused.wait_s is not None and refused.tries_left == 0
