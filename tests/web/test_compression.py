"""Compressed pages and JSON, ETags on pages, and the CSRF token masked on every response
(app/web/compression.py, the BREACH mitigation in app/web/access.py and
app/security/csrf.py)."""

from __future__ import annotations

import contextlib
import gzip
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from app.queue.store import JobStore
from app.security.csrf import unmask_csrf
from app.security.guard import SESSION_COOKIE
from app.stories import StoryRequest
from app.web.compression import COMPRESS_MIN_BYTES, CompressionMiddleware
from tests.helpers.app import ACCEPT_JSON, OWN_ORIGIN, serve
from tests.helpers.jobs import add_job
from tests.helpers.shelving import shelve
from tests.helpers.sql import execute

pytestmark = pytest.mark.anyio

PASSWORD = "correct horse battery staple"
SAME_ORIGIN = {"Origin": OWN_ORIGIN}
GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}
HX = {"HX-Request": "true"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
# A story long enough that its page is well past COMPRESS_MIN_BYTES.
LONG_BODY = "\n\n".join(
    f"The little owl counted star number {n} and yawned, and the moon hummed softly."
    for n in range(40)
)


@contextlib.asynccontextmanager
async def serve_raw(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """Like tests.helpers.app.serve, but a 500 comes back as the page a browser would get."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(
            app=app, client=("127.0.0.1", 50000), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url=OWN_ORIGIN) as http:
            yield http


async def raw_get(http: httpx.AsyncClient, url: str, **headers: str) -> httpx.Response:
    """The response as it came over the wire: `.content` is the still-encoded body."""
    response = await http.send(http.build_request("GET", url, headers=headers), stream=True)
    response._content = b"".join([chunk async for chunk in response.aiter_raw()])
    await response.aclose()
    return response


def vary(response: httpx.Response) -> list[str]:
    (header,) = response.headers.get_list("vary")  # one Vary header, merged
    return [part.strip().lower() for part in header.split(",")]


def tokens(html: str) -> set[str]:
    found = set(TOKEN.findall(html))
    assert found, "the page carries no csrf_token"
    return found


@pytest.fixture
def household_app(make_app):
    return make_app(household_password=PASSWORD, api_token="api-token", allow_open=False)


async def sign_in(http: httpx.AsyncClient) -> None:
    response = await http.post("/login", data={"password": PASSWORD}, headers=SAME_ORIGIN)
    assert response.status_code == 303


def bare_token(app: Starlette, http: httpx.AsyncClient) -> str:
    """The session's own, unmasked CSRF token: what no page may ever show."""
    sessions = app.state.guard.sessions
    sid, _ = sessions.unsign(http.cookies[SESSION_COOKIE])
    return sessions.csrf_token(sid)


# -- compression -------------------------------------------------------------------------


async def test_a_page_is_gzipped_when_asked_and_decompresses_to_the_page(make_app, db):
    story_id = await shelve(JobStore(db), "k1", title="Owl Counts Stars", body=LONG_BODY)
    async with serve(make_app()) as http:
        plain = await raw_get(http, f"/stories/{story_id}", **IDENTITY)
        packed = await raw_get(http, f"/stories/{story_id}", **GZIP)
    assert plain.status_code == packed.status_code == 200
    assert "content-encoding" not in plain.headers
    assert "star number 39" in plain.text
    assert packed.headers["content-encoding"] == "gzip"
    assert int(packed.headers["content-length"]) == len(packed.content) < len(plain.content) / 2
    assert gzip.decompress(packed.content) == plain.content
    # Both say the answer depends on Accept-Encoding, once, beside what they said already.
    for response in (plain, packed):
        assert vary(response) == ["accept", "hx-request", "accept-encoding"]
        assert response.headers["content-security-policy"]  # the security headers survive


async def test_json_is_gzipped_when_asked_and_not_otherwise(make_app, db):
    store = JobStore(db)
    for n in range(20):
        await shelve(store, f"k{n}", title=f"The Owl and the Moon, night {n}")
    async with serve(make_app()) as http:
        plain = await raw_get(http, "/stories", **ACCEPT_JSON, **IDENTITY)
        packed = await raw_get(http, "/stories", **ACCEPT_JSON, **GZIP)
        refused = await raw_get(http, "/stories", **ACCEPT_JSON,
                                **{"Accept-Encoding": "gzip;q=0, br;q=0"})
        unasked = await raw_get(http, "/stories", **ACCEPT_JSON)  # httpx asks by default
        del http.headers["accept-encoding"]
        silent = await raw_get(http, "/stories", **ACCEPT_JSON)  # no Accept-Encoding at all
    assert len(plain.content) > COMPRESS_MIN_BYTES
    assert packed.headers["content-encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert len(plain.json()["stories"]) == 20
    assert unasked.headers["content-encoding"] == "gzip"
    for response in (plain, refused, silent):
        assert "content-encoding" not in response.headers
        assert response.content == plain.content
    for response in (plain, packed, refused, silent):
        assert vary(response).count("accept-encoding") == 1
        assert "etag" not in response.headers  # validators are for pages


async def test_small_answers_are_not_compressed(make_app, db):
    store = JobStore(db)
    story_id = await shelve(store, "k1", title="Hush")
    job = await store.get_by_key("k1")
    async with serve(make_app()) as http:
        poll = await raw_get(http, f"/stories/jobs/{job.id}", **ACCEPT_JSON, **GZIP)
        story = await raw_get(http, f"/stories/{story_id}", **ACCEPT_JSON, **GZIP)
    for response in (poll, story):
        assert response.status_code == 200
        assert len(response.content) < COMPRESS_MIN_BYTES
        assert "content-encoding" not in response.headers
        assert response.json()["story_id"] == story_id
        # Nothing depends on the encoding; JSON's words follow Accept-Language (a job's
        # `error`, a refusal's message: app/web/language.py).
        assert vary(response) == ["accept", "hx-request", "accept-language"]


async def test_streamed_encoded_and_other_bodies_pass_untouched():
    """The rules on a bare app: only whole HTML/JSON bodies without an encoding change."""
    page = "<p>" + "sleep tight " * 200 + "</p>"

    async def streamed(request: Request) -> Response:
        return StreamingResponse(iter([page[:100], page[100:]]), media_type="text/html")

    async def encoded(request: Request) -> Response:
        body = gzip.compress(page.encode())
        return HTMLResponse(body, headers={"Content-Encoding": "gzip"})

    async def text(request: Request) -> Response:
        return Response(page, media_type="text/plain")

    async def html(request: Request) -> Response:
        return HTMLResponse(page)

    app = CompressionMiddleware(Starlette(routes=[
        Route("/streamed", streamed), Route("/encoded", encoded), Route("/text", text),
        Route("/html", html),
    ]))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=OWN_ORIGIN) as http:
        answers = {path: await raw_get(http, f"/{path}", **GZIP)
                   for path in ("streamed", "encoded", "text", "html")}
    assert answers["streamed"].content == page.encode()
    assert answers["encoded"].content == gzip.compress(page.encode())  # not gzipped twice
    assert answers["text"].content == page.encode()
    for path in ("streamed", "encoded", "text"):
        assert "etag" not in answers[path].headers and "vary" not in answers[path].headers
    assert answers["html"].headers["content-encoding"] == "gzip"
    assert answers["html"].headers["etag"].startswith('W/"')


# -- the CSRF token, masked per response ----------------------------------------------------


async def test_the_csrf_token_is_different_on_every_response(household_app, db):
    store = JobStore(db)
    story_id = await shelve(store, "k1", title="Hush")
    # A failed job: its card carries a "Try again" form.
    async with store.db.transaction() as connection:
        job = await add_job(JobStore(connection), "k2", StoryRequest(prompt="a fox"), "k2")
        await execute(connection, "UPDATE story_jobs SET status = 'failed', error_text = 'expired',"
                         " completed_at = now() WHERE id = :id", {"id": job.id})
    async with serve(household_app) as http:
        await sign_in(http)
        seen: list[set[str]] = []
        for _ in range(2):
            seen.append(tokens((await http.get("/", headers=GZIP)).text))
            seen.append(tokens((await http.get(f"/stories/{story_id}")).text))
            seen.append(tokens((await http.get(f"/stories/jobs/{job.id}", headers=HX)).text))
            fragment = await http.post(f"/stories/{story_id}/favourite", data={"favourite": "1"},
                                       headers={**HX, **SAME_ORIGIN})
            assert fragment.status_code == 200 and "favourite-form" in fragment.text
            seen.append(tokens(fragment.text))
        bare = bare_token(household_app, http)
    everyone = set().union(*seen)
    assert len(everyone) == len(seen)  # one mask per response, never the same twice
    assert {unmask_csrf(token) for token in everyone} == {bare}


@pytest.mark.slow
async def test_every_masked_token_passes_and_a_tampered_one_is_refused(household_app, db):
    story_id = await shelve(JobStore(db), "k1", title="Hush")
    async with serve(household_app) as http:  # no Origin: only the token can let a post in
        await sign_in(http)
        for n in range(3):
            (token,) = tokens((await http.get("/")).text)
            as_field = await http.post(
                "/preferences", data={"theme": "night", "next": "/", "csrf_token": token})
            assert as_field.status_code == 303, n
            as_header = await http.post(
                f"/stories/{story_id}/favourite", data={"favourite": str(n % 2)},
                headers={"X-CSRF-Token": token})
            assert as_header.status_code == 303, n
            middle = len(token) // 2
            flipped = "A" if token[middle] != "A" else "B"
            tampered = token[:middle] + flipped + token[middle + 1:]
            for refused in (
                await http.post("/preferences", data={"theme": "light", "csrf_token": tampered}),
                await http.post(f"/stories/{story_id}/favourite", data={"favourite": "0"},
                                headers={"X-CSRF-Token": tampered}),
            ):
                assert refused.status_code == 403
        assert http.cookies["theme"] == "night"  # the tampered posts changed nothing


@pytest.mark.slow
async def test_no_page_ever_shows_the_bare_token(household_app, db):
    """Not the pages, fragments or errors; not the 500 page either, which Starlette renders
    outside every middleware (why the mask is made where the page is rendered)."""

    async def boom(request: Request) -> Response:
        raise RuntimeError("a bug")

    household_app.router.routes.append(Route("/boom", boom))
    story_id = await shelve(JobStore(db), "k1", title="Hush", body=LONG_BODY)
    async with serve_raw(household_app) as http:
        await sign_in(http)
        bare = bare_token(household_app, http)
        answers = [
            await http.get(path, headers=headers)
            for path in ("/", "/stories", "/stories?q=hush", f"/stories/{story_id}",
                         "/stories/deleted", "/stories/999", "/boom")
            for headers in ({}, GZIP, HX)
        ]
        answers.append(await http.post(f"/stories/{story_id}/favourite",
                                       data={"favourite": "1"}, headers={**HX, **SAME_ORIGIN}))
    assert {response.status_code for response in answers} == {200, 404, 500}
    shown = [token for response in answers for token in TOKEN.findall(response.text)]
    assert len(shown) > len(answers)  # most answers carry it, some more than once
    assert {unmask_csrf(token) for token in shown} == {bare}
    for response in answers:
        assert bare not in response.text, response.url
    errors = [response for response in answers if response.status_code >= 400]
    assert all(TOKEN.search(response.text) for response in errors)


# -- validators ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_story_page_revalidates_to_304_until_it_changes(make_app, db):
    story_id = await shelve(JobStore(db), "k1", title="Hush", body=LONG_BODY)
    url = f"/stories/{story_id}"
    async with serve(make_app(), from_own_pages=True) as http:
        first = await http.get(url, headers=GZIP)
        etag = first.headers["etag"]
        assert etag.startswith('W/"') and first.headers["cache-control"] == "no-cache"
        for encoding in (GZIP, IDENTITY):  # one ETag for both forms of the page
            same = await raw_get(http, url, **encoding, **{"If-None-Match": etag})
            assert same.status_code == 304 and same.content == b""
            assert same.headers["etag"] == etag
            assert same.headers["cache-control"] == "no-cache"
            assert "accept-encoding" in vary(same)
            assert "content-length" not in same.headers and "content-encoding" not in same.headers
        listed = await http.get(url, headers={"If-None-Match": f'"other", {etag}'})
        assert listed.status_code == 304
        posted = await http.post(f"{url}/favourite", data={"favourite": "1"})
        assert posted.status_code == 303
        changed = await http.get(url, headers={"If-None-Match": etag})
        assert changed.status_code == 200 and 'aria-pressed="true"' in changed.text
        assert changed.headers["etag"] != etag
        assert (await http.get(url, headers={"If-None-Match": changed.headers["etag"]})
                ).status_code == 304


@pytest.mark.slow
async def test_in_password_mode_a_story_page_still_gets_304s(household_app, db):
    """Its masks differ every time, yet its ETag does not; another device's does."""
    story_id = await shelve(JobStore(db), "k1", title="Hush", body=LONG_BODY)
    url = f"/stories/{story_id}"
    another_device = httpx.ASGITransport(app=household_app, client=("127.0.0.1", 50001))
    async with (
        serve(household_app) as http,
        httpx.AsyncClient(transport=another_device, base_url=OWN_ORIGIN) as other,
    ):
        await sign_in(http)
        await sign_in(other)
        first, second = await http.get(url), await http.get(url)
        assert tokens(first.text) != tokens(second.text)
        etag = first.headers["etag"]
        assert second.headers["etag"] == etag
        assert (await other.get(url)).headers["etag"] != etag  # another session, another page
        assert (await http.get(url, headers={"If-None-Match": etag})).status_code == 304
        assert (await other.get(url, headers={"If-None-Match": etag})).status_code == 200
        posted = await http.post(f"{url}/favourite", data={"favourite": "1"},
                                 headers=SAME_ORIGIN)
        assert posted.status_code == 303
        assert (await http.get(url, headers={"If-None-Match": etag})).status_code == 200


@pytest.mark.slow
async def test_the_home_page_keeps_no_store(make_app):
    async with serve(make_app()) as http:
        home = await http.get("/", headers=GZIP)
        library = await http.get("/stories", headers=GZIP)
    assert home.status_code == 200 and home.headers["cache-control"] == "no-store"
    assert library.headers["cache-control"] == "no-cache" and "etag" in library.headers
