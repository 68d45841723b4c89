"""Who gets in: the household login, the API token, the loopback rule, cross-site requests,
and the headers on every response (issue 5, items 1-5)."""

from __future__ import annotations

import os
import stat
import time

import httpx
import itsdangerous.timed
import pytest
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.security.guard import SESSION_COOKIE
from tests.helpers.app import (
    ACCEPT_JSON,
    JSON,
    PASSWORD,
    SAME_ORIGIN,
    new_key,
    post_story,
    serve,
    serve_as,
    sign_in,
)
from tests.helpers.sql import execute, fetch_val

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-api-token"
STRANGER = ("203.0.113.5", 1234)


@pytest.fixture
def household_app(make_app):
    return make_app(household_password=PASSWORD, api_token=TOKEN, allow_open=False)


async def job_count(db) -> int:
    return await fetch_val(db, "SELECT count(*) FROM story_jobs")


# -- 1. household login ------------------------------------------------------------------


async def test_pages_redirect_to_login_until_signed_in(household_app):
    async with serve(household_app) as http:
        for path in ("/", "/stories", "/stories/1", "/stories/jobs/1"):
            response = await http.get(path)
            assert response.status_code == 303, path
            assert response.headers["location"].startswith("/login")
        login_page = await http.get("/login")
        assert login_page.status_code == 200
        assert 'type="password"' in login_page.text


async def test_login_flow_signs_in_then_everything_just_works(household_app, db):
    async with serve(household_app) as http:
        response = await sign_in(http, next="/stories")
        assert response.status_code == 303
        assert response.headers["location"] == "/stories"
        home = await http.get("/")
        assert home.status_code == 200
        assert "Sign out" in home.text
        # The form posts (with the csrf token the page carries, and from the same origin).
        token = home.text.split('name="csrf_token" value="')[1].split('"')[0]
        posted = await http.post(
            "/stories/generate",
            data={"prompt": "a sleepy whale", "idempotency_key": new_key(), "csrf_token": token},
            headers=SAME_ORIGIN,
        )
        assert posted.status_code == 303
        assert await job_count(db) == 1
        # Signed in, the JSON API works without a token too.
        assert (await post_story(http)).status_code == 202


async def test_wrong_password_is_refused_kindly(household_app):
    async with serve(household_app) as http:
        response = await sign_in(http, password="wrong")
        assert response.status_code == 401
        assert "the household password. Please try again" in response.text
        assert SESSION_COOKIE not in response.cookies
        assert (await http.get("/")).status_code == 303


@pytest.mark.slow
async def test_logout_ends_the_session(household_app):
    async with serve(household_app) as http:
        await sign_in(http)
        assert (await http.get("/")).status_code == 200
        response = await http.post("/logout", headers=SAME_ORIGIN)
        assert response.status_code == 303
        assert response.headers["location"] == "/login"
        assert (await http.get("/")).status_code == 303


async def test_login_never_redirects_to_another_site(household_app):
    async with serve(household_app) as http:
        for evil in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
            response = await sign_in(http, next=evil)
            assert response.headers["location"] == "/"


async def test_session_cookie_flags(household_app):
    async with serve(household_app) as http:
        cookies = (await sign_in(http)).headers.get_list("set-cookie")
    (cookie,) = [c for c in cookies if c.startswith(f"{SESSION_COOKIE}=")]
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "path=/" in attributes
    assert f"max-age={30 * 24 * 3600}" in attributes  # 30 days, renewed by use
    assert "secure" not in attributes  # plain http (local): a Secure cookie would be lost


@pytest.mark.slow
async def test_session_cookie_is_secure_behind_an_https_proxy(household_app):
    """uvicorn's proxy-headers handling (what the Procfile runs) turns X-Forwarded-Proto
    into the request's scheme; the cookie and HSTS follow it."""
    proxied = ProxyHeadersMiddleware(household_app, trusted_hosts="127.0.0.1")
    async with household_app.router.lifespan_context(household_app):
        transport = httpx.ASGITransport(app=proxied, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://app.example") as http:
            response = await http.post(
                "/login",
                data={"password": PASSWORD},
                headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7",
                         "Origin": "https://app.example"},
            )
    assert response.status_code == 303
    (cookie,) = [c for c in response.headers.get_list("set-cookie")
                 if c.startswith(f"{SESSION_COOKIE}=")]
    assert "secure" in [part.strip().lower() for part in cookie.split(";")]
    assert response.headers["strict-transport-security"].startswith("max-age=")


@pytest.mark.slow
async def test_a_forged_or_foreign_cookie_is_not_a_session(household_app, make_app):
    async with serve(household_app) as http:
        http.cookies.set(SESSION_COOKIE, "eyJzaWQiOiJ4In0.forged.signature")
        assert (await http.get("/")).status_code == 303
    other = make_app(household_password=PASSWORD, secret_key="a-different-key", allow_open=False)
    async with serve(household_app) as http:
        await sign_in(http)
        cookie = http.cookies[SESSION_COOKIE]
    async with serve(other) as http:
        http.cookies.set(SESSION_COOKIE, cookie)
        assert (await http.get("/")).status_code == 303


@pytest.mark.slow
async def test_changing_the_password_signs_everyone_out(household_app, make_app, settings):
    async with serve(household_app) as http:
        await sign_in(http)
        cookie = http.cookies[SESSION_COOKIE]
    # Same data_dir, so the same generated secret key; only the password changed.
    changed = make_app(household_password="a new password", allow_open=False)
    async with serve(changed) as http:
        http.cookies.set(SESSION_COOKIE, cookie)
        assert (await http.get("/")).status_code == 303


@pytest.mark.slow
async def test_old_session_is_renewed_and_expired_one_refused(household_app, monkeypatch):
    async with serve(household_app) as http:
        now = time.time()
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now - 2 * 24 * 3600)
        await sign_in(http)  # signed two days ago
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now)
        renewed = await http.get("/")
        assert renewed.status_code == 200
        assert renewed.headers.get_list("set-cookie")[0].startswith(f"{SESSION_COOKIE}=")
        fresh = await http.get("/")
        assert "set-cookie" not in fresh.headers  # renewed at most once a day

        http.cookies.clear()
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now - 31 * 24 * 3600)
        await sign_in(http)  # signed 31 days ago: past the 30 days
        monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now)
        assert (await http.get("/")).status_code == 303


async def test_generated_secret_key_is_kept_private_and_survives_restarts(
    household_app, make_app, settings
):
    async with serve(household_app) as http:
        await sign_in(http)
        cookie = http.cookies[SESSION_COOKIE]
    key_file = settings.data_dir / "secret_key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    restarted = make_app(household_password=PASSWORD, allow_open=False)
    async with serve(restarted) as http:
        http.cookies.set(SESSION_COOKIE, cookie)
        assert (await http.get("/")).status_code == 200


async def test_failed_logins_are_limited_per_address(household_app):
    async with serve(household_app) as http:
        for _ in range(5):
            assert (await sign_in(http, password="guess")).status_code == 401
        limited = await sign_in(http)  # even the right password waits
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        assert SESSION_COOKIE not in limited.cookies
        assert (await http.get("/")).status_code == 303
    # Another address is not held up by the first one's guesses.
    async with serve_as(household_app, ("192.0.2.44", 999)) as http:
        assert (await sign_in(http)).status_code == 303


async def test_login_limit_resets_after_the_window(household_app, db):
    async with serve(household_app) as http:
        for _ in range(5):
            await sign_in(http, password="guess")
        assert (await sign_in(http)).status_code == 429
        await execute(db, "UPDATE login_failures"  # a minute passes
                          " SET window_ends_at = window_ends_at - interval '1 minute'")
        assert (await sign_in(http)).status_code == 303


# -- 2. API token --------------------------------------------------------------------------


async def test_json_api_needs_the_bearer_token(household_app, db):
    async with serve(household_app) as http:
        refused = await post_story(http)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"
        wrong = await http.post(
            "/stories/generate", json={"prompt": "a moth"},
            headers={**JSON, "Idempotency-Key": new_key(), "Authorization": "Bearer nope"},
        )
        assert wrong.status_code == 401
        for path in ("/stories", "/stories/1", "/stories/jobs/1"):
            response = await http.get(path, headers=ACCEPT_JSON)
            assert response.status_code == 401, path
            assert response.json()["error"]["code"] == "unauthorized"
        assert await job_count(db) == 0

        bearer = {"Authorization": f"Bearer {TOKEN}"}
        accepted = await http.post(
            "/stories/generate", json={"prompt": "a moth"},
            headers={**JSON, "Idempotency-Key": new_key(), **bearer},
        )
        assert accepted.status_code == 202
        listed = await http.get("/stories", headers={**ACCEPT_JSON, **bearer})
        assert listed.status_code == 200


async def test_bearer_token_works_even_with_a_foreign_origin(household_app):
    """A page on another site cannot attach the token, so the token alone is proof enough."""
    async with serve(household_app) as http:
        response = await http.post(
            "/stories/generate", json={"prompt": "a moth"},
            headers={**JSON, "Idempotency-Key": new_key(), "Authorization": f"Bearer {TOKEN}",
                     "Origin": "https://elsewhere.example"},
        )
        assert response.status_code == 202


async def test_healthz_and_static_need_no_login(household_app):
    async with serve_as(household_app, STRANGER) as http:
        assert (await http.get("/healthz")).status_code == 200
        assert (await http.get("/static/style.css")).status_code == 200


async def test_htmx_request_without_session_is_sent_to_login(household_app):
    async with serve(household_app) as http:
        response = await http.get("/stories/jobs/1", headers={"HX-Request": "true"})
        assert response.status_code == 401
        assert response.headers["hx-redirect"] == "/login?next=/stories/jobs/1"


# -- 3. not open by accident ---------------------------------------------------------------


async def test_stranger_is_refused_without_a_password(make_app, db):
    app = make_app(allow_open=False)
    async with serve_as(app, STRANGER) as http:
        page = await http.get("/")
        assert page.status_code == 403
        assert "HOUSEHOLD_PASSWORD" in page.text
        assert (await http.get("/stories/1")).status_code == 403
        api = await post_story(http)
        assert api.status_code == 403
        assert api.json()["error"]["code"] == "password_required"
        listed = await http.get("/stories", headers=ACCEPT_JSON)
        assert listed.json()["error"]["code"] == "password_required"
        assert (await http.get("/healthz")).status_code == 200
        assert (await http.get("/static/style.css")).status_code == 200
    assert await job_count(db) == 0


async def test_loopback_is_served_without_a_password(make_app):
    app = make_app(allow_open=False)
    for address in ("127.0.0.1", "::1", "127.0.0.5"):
        async with serve_as(app, (address, 4000)) as http:
            assert (await http.get("/")).status_code == 200, address
            assert (await post_story(http)).status_code == 202


async def test_allow_open_serves_everyone(make_app):
    async with serve_as(make_app(allow_open=True), STRANGER) as http:
        assert (await http.get("/")).status_code == 200
        assert (await post_story(http)).status_code == 202


async def test_rebound_domain_name_is_refused_on_loopback(make_app):
    """DNS rebinding: a stranger's domain pointed at 127.0.0.1 still says its own Host."""
    app = make_app(allow_open=False)
    async with serve_as(app, ("127.0.0.1", 4000), base_url="http://evil.example:8000") as http:
        assert (await http.get("/")).status_code == 403
    for base_url in ("http://localhost:8000", "http://[::1]:8000", "http://127.0.0.1"):
        async with serve_as(app, ("127.0.0.1", 4000), base_url=base_url) as http:
            assert (await http.get("/")).status_code == 200, base_url


async def test_startup_logs_the_mode(make_app, caplog):
    caplog.set_level("INFO", logger="bedtime")
    async with serve(make_app(allow_open=False)):
        pass
    async with serve(make_app(household_password=PASSWORD, api_token=TOKEN)):
        pass
    modes = [r.getMessage() for r in caplog.records if "event=access_mode" in r.getMessage()]
    assert "mode=loopback" in modes[0]
    assert "mode=password" in modes[1]


# -- 4. cross-site requests ----------------------------------------------------------------

FOREIGN = [
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://testserver.evil.example"},
    {"Referer": "https://evil.example/page"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {},  # a form post with no provenance at all is not trusted either
]


@pytest.mark.parametrize("htmx", [False, True], ids=["form", "htmx"])
async def test_cross_site_form_posts_are_refused_and_change_nothing(client, db, htmx):
    for headers in FOREIGN:
        extra = {"HX-Request": "true"} if htmx else {}
        response = await client.post(
            "/stories/generate",
            data={"prompt": "a fox", "idempotency_key": new_key()},
            headers={**headers, **extra},
        )
        assert response.status_code == 403, headers
    assert await job_count(db) == 0


async def test_cross_site_json_post_is_refused(client, db):
    response = await client.post(
        "/stories/generate", json={"prompt": "a fox"},
        headers={**JSON, "Idempotency-Key": new_key(), "Origin": "https://evil.example"},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert await job_count(db) == 0


async def test_cross_site_refused_for_every_unsafe_method(client):
    for method in ("PUT", "PATCH", "DELETE"):
        response = await client.request(
            method, "/stories/1", headers={"Origin": "https://evil.example", **ACCEPT_JSON}
        )
        assert response.status_code == 403, method


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://testserver"},
        {"Origin": "https://testserver"},  # behind a proxy that did not say https
        {"Referer": "http://testserver/"},
        {"Sec-Fetch-Site": "same-origin"},
    ],
)
async def test_same_origin_form_posts_pass(client, db, headers):
    response = await client.post(
        "/stories/generate", data={"prompt": "a fox", "idempotency_key": new_key()},
        headers={**headers, "HX-Request": "true"},
    )
    assert response.status_code == 202
    assert await job_count(db) == 1


async def test_scripts_without_provenance_can_post_json(client):
    """The contract's curl examples: no Origin, Referer or Sec-Fetch-Site, a JSON body."""
    assert (await post_story(client)).status_code == 202


async def test_csrf_token_lets_a_signed_in_form_through(household_app, db):
    """A browser that sends no Origin/Referer (privacy settings) still works with the token."""
    async with serve(household_app) as http:
        await sign_in(http)
        home = await http.get("/")
        token = home.text.split('name="csrf_token" value="')[1].split('"')[0]
        with_token = await http.post(
            "/stories/generate",
            data={"prompt": "a fox", "idempotency_key": new_key(), "csrf_token": token},
        )
        assert with_token.status_code == 303
        by_header = await http.post(
            "/stories/generate",
            data={"prompt": "a fox", "idempotency_key": new_key()},
            headers={"X-CSRF-Token": token},
        )
        assert by_header.status_code == 303
        for bad in ("", "0" * 64, token[:-1] + "x"):
            refused = await http.post(
                "/stories/generate",
                data={"prompt": "a fox", "idempotency_key": new_key(), "csrf_token": bad},
                headers={"Origin": "https://evil.example"},
            )
            assert refused.status_code == 403
    assert await job_count(db) == 2


async def test_cross_site_login_and_logout_are_refused(household_app):
    async with serve(household_app) as http:
        forged = await http.post(
            "/login", data={"password": PASSWORD}, headers={"Origin": "https://evil.example"}
        )
        assert forged.status_code == 403
        assert SESSION_COOKIE not in forged.cookies
        await sign_in(http)
        refused = await http.post("/logout", headers={"Origin": "https://evil.example"})
        assert refused.status_code == 403
        assert (await http.get("/")).status_code == 200  # still signed in


# -- 5. headers ----------------------------------------------------------------------------


@pytest.mark.slow
async def test_security_headers_on_every_page(household_app):
    async with serve(household_app) as http:
        responses = [
            await http.get("/login"),
            await http.get("/"),  # the redirect
            await http.get("/healthz"),
            await http.get("/offline"),  # a page of its own
            await http.get("/static/offline.html"),  # where it was, for a worker kept since
            await http.get("/nowhere"),
        ]
        await sign_in(http)
        responses += [await http.get(path) for path in ("/", "/stories", "/stories/999")]
        responses.append(await http.get("/stories", headers=ACCEPT_JSON))
    for response in responses:
        headers = response.headers
        csp = headers["content-security-policy"]
        for directive in ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"):
            assert directive in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
        assert headers["x-frame-options"] == "DENY"
        assert headers["cross-origin-opener-policy"] == "same-origin"
        policy = headers["permissions-policy"]
        for feature in ("camera=()", "microphone=()", "geolocation=()", "payment=()"):
            assert feature in policy
        assert "strict-transport-security" not in headers  # plain http: no HSTS


async def test_scripts_and_stylesheets_carry_only_the_headers_that_apply_to_them(household_app):
    async with serve(household_app) as http:
        page = await http.get("/login")
        for name in ("style.css", "app.js", "moon.svg", "icons/icon-192.png"):
            headers = (await http.get(f"/static/{name}")).headers
            assert headers["x-content-type-options"] == "nosniff"
            for document_only in ("content-security-policy", "x-frame-options",
                                  "permissions-policy", "cross-origin-opener-policy"):
                assert document_only not in headers, (name, document_only)
        worker = await http.get("/sw.js")  # a service worker's CSP is its script's own
    assert page.headers["content-security-policy"] == worker.headers["content-security-policy"]


async def test_headers_on_refusals_too(make_app):
    async with serve_as(make_app(allow_open=False), STRANGER) as http:
        response = await http.get("/")
    assert response.status_code == 403
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


@pytest.mark.slow
async def test_pages_carry_no_inline_script(household_app):
    async with serve(household_app) as http:
        await sign_in(http)
        for path in ("/", "/stories", "/login"):
            page = (await http.get(path)).text
            for tag in page.split("<script")[1:]:
                assert tag.split(">")[0].strip().startswith("src="), path
            assert " style=" not in page
            assert " on" + "click=" not in page


@pytest.mark.slow
async def test_no_page_or_answer_asks_to_be_indexed(household_app):
    async with serve(household_app) as http:
        login = await http.get("/login")
        responses = [login, await http.get("/"), await http.get("/healthz"),
                     await http.get("/static/style.css"), await http.get("/nowhere")]
        await sign_in(http)
        pages = [await http.get(path) for path in ("/", "/stories", "/stories/deleted")]
        responses += [*pages, await http.get("/stories", headers=ACCEPT_JSON)]
    for response in responses:
        assert response.headers["x-robots-tag"] == "noindex, nofollow", response.url
    for page in [login, *pages]:
        assert '<meta name="robots" content="noindex, nofollow">' in page.text, page.url
