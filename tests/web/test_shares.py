"""Share links, against a real app in password mode, signed out on the reading side: a
link opens one calm page with the story and nothing else of the household, sets no
cookie, and ends when revoked, expired or its story deleted (the same 404 for all, and for
a link never made); guessing is bounded per address and locks no real reader out; only
the household makes links."""

from __future__ import annotations

import re
import time

import pytest

from app.shelf.shares import SHARE_MISSES_MAX, TOKEN_CHARS, token_hash
from tests.helpers.app import (
    ACCEPT_JSON,
    PASSWORD,
    SAME_ORIGIN,
    post_story,
    serve,
    serve_as,
    sign_in,
    wait_for_job,
)
from tests.helpers.sql import execute, fetch_all

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-api-token"
BEARER = {"Authorization": f"Bearer {TOKEN}", **ACCEPT_JSON}
GRANDMA = ("198.51.100.7", 4321)
GUESSER = ("203.0.113.9", 5555)
STORY = "The Whale Who Hummed\n\nOnce upon a time a whale hummed the sea to sleep."


@pytest.fixture
def household(make_app, fake_llm):
    fake_llm.story = STORY
    return make_app(household_password=PASSWORD, api_token=TOKEN, allow_open=False)


async def a_story(client) -> int:
    job = (await client.post("/stories/generate", json={"prompt": "a whale",
                                                        "child_name": "Mia Rose Jones"},
                             headers={**BEARER, "Idempotency-Key": str(time.monotonic_ns())}))
    done = await wait_for_job(client, job.json()["job_id"])
    return done["story_id"]


async def share(client, story_id: int) -> dict:
    answer = await client.post(f"/stories/{story_id}/share", json={}, headers=BEARER)
    assert answer.status_code == 201, answer.text
    return answer.json()


async def test_a_link_opens_one_calm_page_with_the_story_and_nothing_else(household, db):
    async with serve(household) as client:
        client.headers.update({"Authorization": f"Bearer {TOKEN}"})
        story_id = await a_story(client)
        made = await share(client, story_id)
    token = made["url"].removeprefix("/shared/")
    assert re.fullmatch(r"[A-Za-z0-9_-]+", token) and len(token) == TOKEN_CHARS >= 22
    assert made["expires_at"] and made["share_id"]
    # Only the hash is stored, never the token.
    rows = await fetch_all(db, "SELECT token_hash FROM story_shares")
    assert [bytes(r["token_hash"]) for r in rows] == [token_hash(token)]
    async with serve_as(household, GRANDMA) as grandma:  # no session, no password
        page = await grandma.get(made["url"])
        assert page.status_code == 200
        assert "The Whale Who Hummed" in page.text and "hummed the sea to sleep" in page.text
        assert "Mia" in page.text and "Rose" not in page.text and "Jones" not in page.text
        assert "set-cookie" not in page.headers and not grandma.cookies
        assert page.headers["x-robots-tag"].startswith("noindex")
        assert page.headers["referrer-policy"] == "no-referrer"
        assert "noindex" in page.text and "default-src 'self'" in page.headers[
            "content-security-policy"]
        # Nothing of the household: no link into it, no form, no token.
        hrefs = re.findall(r'href="([^"]+)"', page.text)
        assert all(h.startswith("/static/") or h.startswith("data:") for h in hrefs), hrefs
        assert "<form" not in page.text and "csrf" not in page.text.lower()
        assert "/stories" not in page.text and "Library" not in page.text
        head = await grandma.head(made["url"])
        assert head.status_code == 200 and head.content == b""
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            refused = await grandma.request(method, made["url"])
            assert refused.status_code == 405, method


async def test_revoked_expired_deleted_and_unknown_links_look_the_same(household, db):
    async with serve(household) as client:
        client.headers.update({"Authorization": f"Bearer {TOKEN}"})
        story_id = await a_story(client)
        revoked, expired, deleted, kept = [await share(client, story_id) for _ in range(4)]
        listed = (await client.get(f"/stories/{story_id}/shares", headers=BEARER)).json()
        assert [s["share_id"] for s in listed["shares"]] == [
            revoked["share_id"], expired["share_id"], deleted["share_id"], kept["share_id"]]
        gone = await client.post(
            f"/stories/{story_id}/shares/{revoked['share_id']}/revoke", json={}, headers=BEARER)
        assert gone.status_code == 204
        await execute(db, "UPDATE story_shares SET expires_at = now() - interval '1 second'"
                          " WHERE id = :id", {"id": expired["share_id"]})
        other_story = await a_story(client)
        deleted = await share(client, other_story)
        assert (await client.post(f"/stories/{other_story}/delete", json={},
                                  headers=BEARER)).status_code < 400
        # Restored, the story comes back; its link does not.
        await client.post(f"/stories/{other_story}/restore", json={}, headers=BEARER)
    async with serve_as(household, GRANDMA) as grandma:
        unknown = "A" * TOKEN_CHARS
        answers = [await grandma.get(url) for url in (
            revoked["url"], expired["url"], deleted["url"], f"/shared/{unknown}")]
        assert {a.status_code for a in answers} == {404}
        assert len({a.text for a in answers}) == 1  # one and the same page
        assert (await grandma.get(kept["url"])).status_code == 200


async def test_guessing_150_links_finds_nothing_and_locks_no_reader_out(household):
    async with serve(household) as client:
        client.headers.update({"Authorization": f"Bearer {TOKEN}"})
        made = await share(client, await a_story(client))
    async with serve_as(household, GUESSER) as guesser, serve_as(household, GRANDMA) as grandma:
        codes = []
        for n in range(150):
            guess = f"{n:0{TOKEN_CHARS}d}"
            codes.append((await guesser.get(f"/shared/{guess}")).status_code)
        assert set(codes) == {404, 429}  # found nothing, then waited
        assert codes[:SHARE_MISSES_MAX] == [404] * SHARE_MISSES_MAX
        assert codes[SHARE_MISSES_MAX:] == [429] * (150 - SHARE_MISSES_MAX)
        waited = await guesser.get(made["url"])  # this address waits, even for a real link
        assert waited.status_code == 429 and "retry-after" in waited.headers
        # Grandma, elsewhere, reads as ever: nobody's guessing holds her up.
        assert (await grandma.get(made["url"])).status_code == 200


async def test_strangers_cannot_make_see_or_stop_links(household):
    async with serve(household) as client:
        client.headers.update({"Authorization": f"Bearer {TOKEN}"})
        story_id = await a_story(client)
        made = await share(client, story_id)
    async with serve_as(household, GRANDMA) as stranger:
        assert (await stranger.post(f"/stories/{story_id}/share", json={})).status_code == 401
        assert (await stranger.get(f"/stories/{story_id}/shares",
                                   headers=ACCEPT_JSON)).status_code == 401
        assert (await stranger.post(f"/stories/{story_id}/shares/{made['share_id']}/revoke",
                                    json={})).status_code == 401
        # The page's own form, signed out: to the login page, nothing made.
        form = await stranger.post(f"/stories/{story_id}/share", headers=SAME_ORIGIN)
        assert form.status_code in (303, 403)
        assert (await stranger.get(made["url"])).status_code == 200  # the link still opens


async def test_the_story_page_makes_lists_and_stops_links(household, db):
    async with serve(household) as client:
        await sign_in(client)
        story_id = await a_story_signed_in(client)
        page = await client.get(f"/stories/{story_id}")
        csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
        assert "Share…" in page.text
        made = await client.post(f"/stories/{story_id}/share", data={"csrf_token": csrf},
                                 headers=SAME_ORIGIN)
        assert made.status_code == 200
        url = re.search(r'value="(http[^"]+/shared/[^"]+)"', made.text).group(1)
        assert "Stop sharing…" in made.text and "Copy the link" in made.text
        assert '<details class="confirm share-stop">' in made.text  # two steps
        share_id = (await fetch_all(db, "SELECT id FROM story_shares"))[0]["id"]
        stopped = await client.post(f"/stories/{story_id}/shares/{share_id}/revoke",
                                    data={"csrf_token": csrf}, headers=SAME_ORIGIN)
        assert stopped.status_code == 303
        after = await client.get(f"/stories/{story_id}")
        assert "Stop sharing" not in after.text
    async with serve_as(household, GRANDMA) as grandma:
        assert (await grandma.get(url.split("testserver")[-1])).status_code == 404


async def a_story_signed_in(client) -> int:
    job = await post_story(client, {"prompt": "a whale"})
    return (await wait_for_job(client, job.json()["job_id"]))["story_id"]
