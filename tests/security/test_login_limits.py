"""Nobody can lock the household out, and a tablet in use stays signed in (issue 20, item 4):
failed logins counted in PostgreSQL (every process shares them), device cookies that let a
device which has signed in before through any flood of other clients' failures, sessions
that expire by disuse, and a login page that says when a lock lifts."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator

import httpx
import itsdangerous.timed
import pytest
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.security.guard import DEVICE_COOKIE, SESSION_COOKIE
from app.security.limits import LoginAttempt, LoginLimiter
from tests.helpers.app import OWN_ORIGIN, PASSWORD, SAME_ORIGIN, serve, sign_in
from tests.helpers.sql import execute, fetch_all, fetch_val

pytestmark = pytest.mark.anyio

YEAR_S = 365 * 24 * 3600


@pytest.fixture
def household_app(make_app):
    """Behind a platform router (`FORWARDED_ALLOW_IPS=*`): anyone can write the address
    the app sees, so the per-address limit alone holds nobody back."""
    return make_app(household_password=PASSWORD, api_token="t", allow_open=False,
                    forwarded_allow_ips="*")


async def log_in(http: httpx.AsyncClient, password: str, address: str) -> httpx.Response:
    return await http.post("/login", data={"password": password},
                           headers={**SAME_ORIGIN, "X-Forwarded-For": address})


async def flood(http: httpx.AsyncClient, failures: int, *, address: str | None = None
                ) -> list[int]:
    """Wrong passwords, 20 at a time, each from a new address (or all from one)."""
    codes: list[int] = []
    for start in range(0, failures, 20):
        codes += [r.status_code for r in await asyncio.gather(*(
            log_in(http, "a guess", address or f"10.{n // 256 % 256}.{n % 256}.7")
            for n in range(start, min(start + 20, failures))))]
    return codes


@contextlib.asynccontextmanager
async def devices(app, count: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    """One app running, and `count` devices, each with its own cookies."""
    async with app.router.lifespan_context(app), contextlib.AsyncExitStack() as stack:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        yield [await stack.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url=OWN_ORIGIN)) for _ in range(count)]


def minutes_in(page: str) -> int:
    return int(re.search(r"Try again in (\d+) minutes?", page).group(1))


def cookie_line(response: httpx.Response, name: str) -> list[str]:
    (line,) = [c for c in response.headers.get_list("set-cookie") if c.startswith(f"{name}=")]
    return [part.strip().lower() for part in line.split(";")]


# -- device cookies ----------------------------------------------------------------------


@pytest.mark.slow
async def test_a_device_that_signed_in_before_gets_in_during_a_flood_from_rotating_addresses(
    household_app,
):
    async with devices(household_app, 2) as (household, stranger):
        assert (await log_in(household, PASSWORD, "198.51.100.7")).status_code == 303
        assert (await household.post("/logout", headers=SAME_ORIGIN)).status_code == 303
        assert DEVICE_COOKIE in household.cookies  # kept after signing out

        async def sign_in_and_out(address: str) -> int:
            status = (await log_in(household, PASSWORD, address)).status_code
            await household.post("/logout", headers=SAME_ORIGIN)
            return status

        # The household signs in while the flood goes on, and once it is at its height.
        codes, during = await asyncio.gather(flood(stranger, 200), sign_in_and_out("10.0.0.7"))
        assert codes.count(401) == 100 and codes.count(429) == 100  # the app-wide ceiling
        assert during == 303
        # The stranger writes the household's own address too.
        assert await flood(stranger, 10, address="198.51.100.7") == [429] * 10
        assert (await log_in(stranger, PASSWORD, "192.0.2.1")).status_code == 429
        stranger.cookies.set(DEVICE_COOKIE, "eyJkZXZpY2UiOiJ4In0.forged.signature")
        assert (await log_in(stranger, PASSWORD, "192.0.2.1")).status_code == 429

        for address in ("198.51.100.7", "10.0.0.7", "192.0.2.1"):  # wherever it is
            signed_in = await log_in(household, PASSWORD, address)
            assert signed_in.status_code == 303, address
            assert (await household.get("/")).status_code == 200
            await household.post("/logout", headers=SAME_ORIGIN)


@pytest.mark.slow
async def test_without_a_device_cookie_the_address_and_app_limits_still_apply(household_app):
    async with serve(household_app) as http:
        assert await flood(http, 5, address="203.0.113.5") == [401] * 5
        limited = await log_in(http, PASSWORD, "203.0.113.5")  # even the right password
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        assert SESSION_COOKIE not in limited.cookies and DEVICE_COOKIE not in limited.cookies
        assert minutes_in(limited.text) == 1

        codes = await flood(http, 120)  # 95 more fit under the app's 100
        assert codes.count(401) == 95 and codes.count(429) == 25
        limited = await log_in(http, PASSWORD, "192.0.2.44")  # a new address, no cookie
        assert limited.status_code == 429
        assert 60 < int(limited.headers["retry-after"]) <= 15 * 60
        assert minutes_in(limited.text) == 15
        assert (await http.get("/")).status_code == 303


@pytest.mark.slow
async def test_a_known_device_has_a_small_limit_of_its_own(household_app, db):
    """A stolen tablet cannot guess forever, and its guesses lock out nobody else."""
    async with serve(household_app) as http:
        await log_in(http, PASSWORD, "198.51.100.7")
        await http.post("/logout", headers=SAME_ORIGIN)
        device = http.cookies.get(DEVICE_COOKIE)
        codes = await flood(http, 12, address="198.51.100.7")
        assert codes.count(401) == 10 and codes.count(429) == 2
        limited = await log_in(http, PASSWORD, "192.0.2.1")  # moving elsewhere changes nothing
        assert limited.status_code == 429
        assert 14 * 60 < int(limited.headers["retry-after"]) <= 15 * 60
        assert minutes_in(limited.text) == 15

        http.cookies.clear()  # another device, at the same address, is not held up
        assert (await log_in(http, PASSWORD, "198.51.100.7")).status_code == 303
        http.cookies.clear()
        http.cookies.set(DEVICE_COOKIE, device or "")
        await execute(db, "UPDATE login_failures SET window_ends_at = now() - interval '1 second'")
        assert (await log_in(http, PASSWORD, "192.0.2.1")).status_code == 303  # window over


@pytest.mark.slow
async def test_the_device_cookie_is_long_lived_and_outlives_signing_out(household_app):
    async with serve(household_app) as http:
        signed_in = await log_in(http, PASSWORD, "198.51.100.7")
        attributes = cookie_line(signed_in, DEVICE_COOKIE)
        assert {"httponly", "samesite=lax", "path=/", f"max-age={YEAR_S}"} <= set(attributes)
        assert "secure" not in attributes  # plain http
        signed_out = await http.post("/logout", headers=SAME_ORIGIN)
        assert not [c for c in signed_out.headers.get_list("set-cookie")
                    if c.startswith(f"{DEVICE_COOKIE}=")]
        assert DEVICE_COOKIE in http.cookies and SESSION_COOKIE not in http.cookies
        first = http.cookies[DEVICE_COOKIE]
        await log_in(http, PASSWORD, "198.51.100.7")  # signing in again: the same device
        guard = household_app.state.guard
        assert guard.sessions.unsign_device(http.cookies[DEVICE_COOKIE]) == \
            guard.sessions.unsign_device(first)

    proxied = ProxyHeadersMiddleware(household_app, trusted_hosts="127.0.0.1")
    async with household_app.router.lifespan_context(household_app):
        transport = httpx.ASGITransport(app=proxied, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://app.example") as http:
            response = await http.post("/login", data={"password": PASSWORD}, headers={
                "X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7",
                "Origin": "https://app.example"})
    assert "secure" in cookie_line(response, DEVICE_COOKIE)


@pytest.mark.slow
async def test_a_session_from_before_device_cookies_gets_one_when_it_is_renewed(
    household_app, monkeypatch,
):
    """A tablet signed in before the upgrade, or one that never signs in again, still
    counts as known: the device cookie is renewed with the session's (once a day)."""
    async with serve(household_app) as http:
        now = time.time()
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now - 2 * 24 * 3600)
        await sign_in(http)
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now)
        del http.cookies[DEVICE_COOKIE]
        renewed = await http.get("/")
        assert renewed.status_code == 200
        assert f"max-age={YEAR_S}" in cookie_line(renewed, DEVICE_COOKIE)
        await http.post("/logout", headers=SAME_ORIGIN)
        assert "Welcome back" in (await http.get("/login")).text


# -- every process counts the same failures ------------------------------------------------


@pytest.mark.slow
async def test_two_app_instances_on_one_database_share_the_counts(make_app):
    one, two = (make_app(household_password=PASSWORD, allow_open=False,
                         forwarded_allow_ips="*") for _ in range(2))
    async with serve(one) as first, serve(two) as second:
        assert await flood(first, 3, address="203.0.113.5") == [401] * 3
        assert await flood(second, 2, address="203.0.113.5") == [401] * 2
        assert (await log_in(first, PASSWORD, "203.0.113.5")).status_code == 429
        assert (await log_in(second, PASSWORD, "203.0.113.5")).status_code == 429

        # Sent at once through both, a burst from one address still gets only five tries.
        codes = await asyncio.gather(*(log_in(http, "a guess", "203.0.113.9")
                                       for http in (first, second) * 15))
        assert sorted(r.status_code for r in codes) == [401] * 5 + [429] * 25


async def test_the_app_wide_ceiling_counts_many_addresses_but_not_one(db):
    limiter = LoginLimiter(max_failures=5, app_max_failures=20, app_window_s=60)
    for n in range(20):
        assert await limiter.admit(db, LoginAttempt(f"198.51.100.{n}")) is None
    assert 1 <= await limiter.admit(db, LoginAttempt("203.0.113.9")) <= 60  # everyone waits
    assert await limiter.admit(db, LoginAttempt("203.0.113.9", device="tablet")) is None

    await execute(db, "DELETE FROM login_failures")
    for _ in range(50):
        await limiter.admit(db, LoginAttempt("203.0.113.5"))
    assert await limiter.admit(db, LoginAttempt("198.51.100.1")) is None  # not all used up
    assert await fetch_val(db, "SELECT failures FROM login_failures WHERE scope = 'app'") == 6


@pytest.mark.slow
async def test_refused_attempts_leave_no_rows_and_old_counts_are_pruned(db):
    limiter = LoginLimiter(app_max_failures=10)
    for n in range(500):
        await limiter.admit(db, LoginAttempt(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}"))
    assert await fetch_val(db, "SELECT count(*) FROM login_failures") == 11  # 10 + the app
    await limiter.succeeded(db, LoginAttempt("10.0.0.3"))  # the right password: forgotten
    assert await fetch_val(db, "SELECT count(*) FROM login_failures") == 10
    await execute(db, "UPDATE login_failures SET window_ends_at = now() - interval '1 second'")
    await limiter.failed(db)
    assert await fetch_val(db, "SELECT count(*) FROM login_failures") == 0


# -- sessions expire by disuse -------------------------------------------------------------


@pytest.mark.slow
async def test_a_session_used_daily_for_31_days_stays_while_an_unused_one_is_pruned(
    household_app, db,
):
    sessions = household_app.state.guard.sessions
    async with devices(household_app, 3) as (tablet, phone, laptop):
        await sign_in(tablet)
        await sign_in(phone)
        in_use = sessions.unsign(tablet.cookies[SESSION_COOKIE])[0]
        unused = sessions.unsign(phone.cookies[SESSION_COOKIE])[0]
        for _ in range(31):  # a day passes; the tablet reads a story
            await execute(db, "UPDATE sessions SET created_at = created_at - interval '1 day',"
                              " last_seen_at = last_seen_at - interval '1 day'")
            assert (await tablet.get("/")).status_code == 200
        assert (await phone.get("/")).status_code == 303  # unused for 31 days
        await sign_in(laptop)  # signing in prunes
        assert (await tablet.get("/")).status_code == 200
        rows = {r["sid"] for r in await fetch_all(db, "SELECT sid FROM sessions")}
        assert in_use in rows and unused not in rows
        age = await fetch_val(db, "SELECT now() - created_at FROM sessions WHERE sid = :sid",
                              {"sid": in_use})
        assert age.days == 31

        # Its last use is written at most every few minutes, not on every request.
        def seen():
            return fetch_val(db, "SELECT (xmin::text, last_seen_at) FROM sessions"
                                 " WHERE sid = :sid", {"sid": in_use})
        before = await seen()
        for _ in range(5):
            assert (await tablet.get("/stories")).status_code == 200
        assert await seen() == before
        await execute(db, "UPDATE sessions SET last_seen_at = now() - interval '10 minutes'")
        assert (await tablet.get("/")).status_code == 200
        assert await fetch_val(db, "SELECT now() - last_seen_at < interval '1 minute'"
                                   " FROM sessions WHERE sid = :sid", {"sid": in_use})


# -- what the page says --------------------------------------------------------------------


async def test_the_login_page_says_when_the_lock_lifts_and_welcomes_only_a_known_device(
    household_app,
):
    async with serve(household_app) as http:
        first_visit = await http.get("/login")
        assert "Welcome back" not in first_visit.text
        await flood(http, 5, address="203.0.113.5")
        locked = await log_in(http, PASSWORD, "203.0.113.5")
        assert locked.status_code == 429
        assert "Try again in 1 minute:" in locked.text
        assert "even the right password has to wait" in locked.text
        assert "Welcome back" not in locked.text

        await log_in(http, PASSWORD, "198.51.100.7")
        await http.post("/logout", headers=SAME_ORIGIN)
        assert "Welcome back" in (await http.get("/login")).text
        assert await flood(http, 10, address="198.51.100.7") == [401] * 10
        locked = await log_in(http, PASSWORD, "198.51.100.7")
        assert locked.status_code == 429
        assert "Try again in 15 minutes:" in locked.text
        assert "Welcome back" in locked.text
