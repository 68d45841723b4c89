"""Stories cut short stay in view until finished or dismissed: "Not finished yet" on the
library page and (while recent) the home page, `GET /stories/unfinished`, the library's
search, and `POST /stories/jobs/{id}/dismiss` (nothing deleted). Nothing is gone by one
tap: a Dismiss offers its Undo (`.../undismiss`), and the library (its search too) keeps
those dismissed apart, each to bring back."""

from __future__ import annotations

import re

import pytest

from app.failures import INTERRUPTED
from app.queue.store import JobStore
from tests.helpers.app import ACCEPT_JSON, JSON, SAME_ORIGIN, serve
from tests.helpers.jobs import cut_short
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio

OWL = "The Owl Who Knitted\n\nOnce upon a time an owl knitted a scarf for the moon."
FOX = "The Quiet Fox\n\nA fox tiptoed through the snow, looking for"


@pytest.fixture
async def http(make_app):
    async with serve(make_app(worker_concurrency=0)) as client:
        yield client


async def listed(http) -> list[int]:
    answer = await http.get("/stories/unfinished")
    assert answer.status_code == 200, answer.text
    return [job["job_id"] for job in answer.json()["jobs"]]


def section(page: str) -> str:
    """The page's "Not finished yet" list, without those dismissed ("" : none)."""
    found = re.search(r'<section id="unfinished".*?</section>', page, re.S)
    return found.group(0).split('<details class="unfinished-put-away"')[0] if found else ""


def put_away(page: str) -> str:
    """The library's stories cut short and dismissed, each to bring back ("": none)."""
    found = re.search(r'<details class="unfinished-put-away".*?</details>', page, re.S)
    return found.group(0) if found else ""


async def test_every_story_cut_short_is_listed_with_its_words(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL, child_name="Mia")
    fox = await cut_short(store, "a quiet fox", FOX, error=INTERRUPTED)
    answer = await http.get("/stories/unfinished")
    assert answer.json() == {"jobs": [
        {"job_id": fox.id, "title": "The Quiet Fox", "words": FOX, "error": "interrupted",
         "error_code": "interrupted", "created_at": answer.json()["jobs"][0]["created_at"]},
        {"job_id": owl.id, "title": "The Owl Who Knitted", "words": OWL, "error": "cancelled",
         "error_code": "stopped", "created_at": answer.json()["jobs"][1]["created_at"]},
    ]}
    await aged(db, owl.id, "1 hour")
    await aged(db, fox.id, "1 hour")
    for path in ("/stories", "/"):
        shown = section((await http.get(path)).text)
        assert "Not finished yet" in shown, path
        assert "The Owl Who Knitted" in shown and "The Quiet Fox" in shown, path
        assert f'action="/stories/jobs/{owl.id}/finish"' in shown, path
        assert f'action="/stories/jobs/{owl.id}/dismiss"' in shown, path


async def test_one_without_words_or_finished_already_is_not_listed(http, db):
    store = JobStore(db)
    await cut_short(store, "stopped before a word", "")
    owl = await cut_short(store, "an owl who knits", OWL)
    assert await listed(http) == [owl.id]
    finish = await http.post(f"/stories/jobs/{owl.id}/finish", json={},
                             headers={**JSON, "Idempotency-Key": "finish-it"})
    assert finish.status_code == 202, finish.text
    assert await listed(http) == []  # its finishing job is on its way (a card on home)
    assert "Not finished yet" not in (await http.get("/stories")).text


async def test_dismissing_takes_it_off_every_list_and_deletes_nothing(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL)
    fox = await cut_short(store, "a quiet fox", FOX)
    answer = await http.post(f"/stories/jobs/{owl.id}/dismiss", json={},
                             headers={**JSON, **SAME_ORIGIN})
    assert answer.status_code == 200 and answer.json() == {"job_id": owl.id, "dismissed": True}
    assert await listed(http) == [fox.id]
    await aged(db, owl.id, "1 hour")
    for path in ("/stories", "/"):
        assert "The Owl Who Knitted" not in section((await http.get(path)).text), path
    assert "The Owl Who Knitted" not in (await http.get("/")).text
    job = (await http.get(f"/stories/jobs/{owl.id}", headers=ACCEPT_JSON)).json()
    assert job["text_so_far"] == OWL  # its page still finishes it
    again = await http.post(f"/stories/jobs/{owl.id}/dismiss", json={},
                            headers={**JSON, **SAME_ORIGIN})
    assert again.status_code == 200
    missing = await http.post("/stories/jobs/999999/dismiss", json={},
                              headers={**JSON, **SAME_ORIGIN})
    assert missing.status_code == 404


async def test_dismiss_as_a_form_and_with_htmx(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL)
    fox = await cut_short(store, "a quiet fox", FOX)
    form = await http.post(f"/stories/jobs/{owl.id}/dismiss", data={"next": "/"},
                           headers=SAME_ORIGIN)
    # Back where it was tapped, which says so and offers its Undo (no JavaScript needed).
    assert form.status_code == 303
    assert form.headers["location"] == f"/?dismissed={owl.id}#unfinished"
    home = section((await http.get(form.headers["location"])).text)
    assert "Dismissed." in home and "The Owl Who Knitted" not in home
    assert f'action="/stories/jobs/{owl.id}/undismiss"' in home
    fragment = await http.post(f"/stories/jobs/{fox.id}/dismiss", data={"next": "/stories"},
                               headers={**SAME_ORIGIN, "HX-Request": "true"})
    assert fragment.status_code == 200
    assert fragment.text.lstrip().startswith('<li class="unfinished-item unfinished-dismissed"')
    assert f'hx-post="/stories/jobs/{fox.id}/undismiss"' in fragment.text
    assert '<input type="hidden" name="next" value="/stories">' in fragment.text
    assert await listed(http) == []
    # An Undo for what is not dismissed (a link kept from before) is not offered.
    await http.post(f"/stories/jobs/{owl.id}/undismiss", json={}, headers={**JSON, **SAME_ORIGIN})
    assert "Dismissed." not in section((await http.get(f"/?dismissed={owl.id}")).text)


async def test_undo_puts_a_dismissed_story_back_on_every_list(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL)
    fox = await cut_short(store, "a quiet fox", FOX)
    for job in (owl, fox):
        await http.post(f"/stories/jobs/{job.id}/dismiss", json={}, headers={**JSON, **SAME_ORIGIN})
    assert await listed(http) == []
    answer = await http.post(f"/stories/jobs/{owl.id}/undismiss", json={},
                             headers={**JSON, **SAME_ORIGIN})
    assert answer.status_code == 200 and answer.json() == {"job_id": owl.id, "dismissed": False}
    again = await http.post(f"/stories/jobs/{owl.id}/undismiss", json={},
                            headers={**JSON, **SAME_ORIGIN})
    assert again.status_code == 200  # a second tap: the same answer
    assert await listed(http) == [owl.id]
    await aged(db, owl.id, "1 hour")  # a card no more: the home page's list has it
    for path in ("/stories", "/"):
        assert "The Owl Who Knitted" in section((await http.get(path)).text), path
    # With htmx: its row again, in place, with Finish and Dismiss.
    row = await http.post(f"/stories/jobs/{fox.id}/undismiss", data={"next": "/"},
                          headers={**SAME_ORIGIN, "HX-Request": "true"})
    assert row.status_code == 200
    assert row.text.lstrip().startswith(f'<li class="unfinished-item" id="unfinished-{fox.id}">')
    assert "The Quiet Fox" in row.text
    assert f'action="/stories/jobs/{fox.id}/finish"' in row.text
    assert f'hx-post="/stories/jobs/{fox.id}/dismiss"' in row.text
    assert '<input type="hidden" name="next" value="/">' in row.text
    assert await listed(http) == [fox.id, owl.id]
    # As a plain form: back to the page it was tapped on.
    await http.post(f"/stories/jobs/{fox.id}/dismiss", json={}, headers={**JSON, **SAME_ORIGIN})
    form = await http.post(f"/stories/jobs/{fox.id}/undismiss", data={"next": "/"},
                           headers=SAME_ORIGIN)
    assert form.status_code == 303 and form.headers["location"] == "/"
    assert await listed(http) == [fox.id, owl.id]
    missing = await http.post("/stories/jobs/999999/undismiss", json={},
                              headers={**JSON, **SAME_ORIGIN})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


async def test_undo_from_another_site_is_refused(http, db):
    owl = await cut_short(JobStore(db), "an owl who knits", OWL)
    await http.post(f"/stories/jobs/{owl.id}/dismiss", json={}, headers={**JSON, **SAME_ORIGIN})
    answer = await http.post(f"/stories/jobs/{owl.id}/undismiss", data={},
                             headers={"Origin": "https://elsewhere.example"})
    assert answer.status_code == 403
    assert await listed(http) == []


async def test_the_library_keeps_a_dismissed_story_to_find_and_bring_back(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL, child_name="Mia")
    fox = await cut_short(store, "a quiet fox", FOX)
    await http.post(f"/stories/jobs/{owl.id}/dismiss", json={}, headers={**JSON, **SAME_ORIGIN})
    await aged(db, owl.id, "1 hour")
    library = (await http.get("/stories")).text
    assert "The Owl Who Knitted" not in section(library)
    assert "The Quiet Fox" in section(library)
    kept = put_away(library)
    assert "Dismissed (1)" in kept and "The Owl Who Knitted" in kept and "The Quiet Fox" not in kept
    assert "<details class=\"unfinished-put-away\">" in kept  # out of the way: closed
    assert f'action="/stories/jobs/{owl.id}/undismiss"' in kept
    assert f'action="/stories/jobs/{owl.id}/dismiss"' not in kept
    # The search finds it, in the page and in htmx's answer, shown at once (open).
    for headers in ({}, {"HX-Request": "true"}):
        found = (await http.get("/stories", params={"q": "scarf"}, headers=headers)).text
        assert "The Owl Who Knitted" in put_away(found) and " open>" in put_away(found)
        assert "The Quiet Fox" not in found and "No stories match" not in found
    assert "The Owl Who Knitted" in put_away((await http.get("/stories", params={"q": "mia"})).text)
    # The JSON list is the contract's: those not dismissed.
    assert await listed(http) == [fox.id]
    # Bring back: on the lists again, the library opened where it is.
    back = await http.post(f"/stories/jobs/{owl.id}/undismiss",
                           data={"next": f"/stories#unfinished-{owl.id}"}, headers=SAME_ORIGIN)
    assert back.status_code == 303 and back.headers["location"] == f"/stories#unfinished-{owl.id}"
    library = (await http.get("/stories")).text
    assert "The Owl Who Knitted" in section(library) and put_away(library) == ""
    assert await listed(http) == [fox.id, owl.id]


async def test_dismiss_from_another_site_is_refused(http, db):
    owl = await cut_short(JobStore(db), "an owl who knits", OWL)
    answer = await http.post(f"/stories/jobs/{owl.id}/dismiss", data={},
                             headers={"Origin": "https://elsewhere.example"})
    assert answer.status_code == 403
    assert await listed(http) == [owl.id]


@pytest.mark.slow
async def test_the_library_search_finds_a_story_cut_short(http, db):
    store = JobStore(db)
    await cut_short(store, "an owl who knits", OWL, child_name="Mia")
    await cut_short(store, "a quiet fox", FOX)
    for query in ("scarf", "mia", "owl knits"):
        page = (await http.get("/stories", params={"q": query})).text
        assert "The Owl Who Knitted" in section(page), query
        assert "The Quiet Fox" not in page, query
        assert "No stories match" not in page, query
    fragment = await http.get("/stories", params={"q": "scarf"}, headers={"HX-Request": "true"})
    assert "The Owl Who Knitted" in section(fragment.text)
    nothing = (await http.get("/stories", params={"q": "zebra"})).text
    assert section(nothing) == "" and "No stories match" in nothing


async def aged(db, job_id: int, interval: str) -> None:
    """A job made and failed `interval` ago (an evening's earlier story, or last week's)."""
    await fetch_val(db, "UPDATE story_jobs SET created_at = now() - ago, started_at = now() - ago,"
                        " completed_at = now() - ago"
                        " FROM (SELECT CAST(CAST(:ago AS text) AS interval) AS ago) AS a"
                        " WHERE id = :id RETURNING id", {"id": job_id, "ago": interval})


@pytest.mark.slow
async def test_home_lists_the_recent_ones_once(http, db):
    store = JobStore(db)
    owl = await cut_short(store, "an owl who knits", OWL)
    fox = await cut_short(store, "a quiet fox", FOX)
    just_now = await cut_short(store, "a sleepy bear", "A Sleepy Bear\n\nThe bear yawned.")
    await aged(db, owl.id, "3 days")
    await aged(db, fox.id, "2 hours")
    home = (await http.get("/")).text
    assert "The Quiet Fox" in section(home)  # after its card has left the page
    assert "The Owl Who Knitted" not in home  # in the library only
    # A story stopped a moment ago is its card still: shown once, not twice.
    assert "A Sleepy Bear" not in section(home) and f'id="job-{just_now.id}"' in home
    library = section((await http.get("/stories")).text)
    assert "The Owl Who Knitted" in library and "The Quiet Fox" in library


@pytest.mark.slow
async def test_a_browser_asking_for_the_list_is_sent_to_the_library(http):
    answer = await http.get("/stories/unfinished", headers={"Accept": "text/html"})
    assert answer.status_code == 303 and answer.headers["location"] == "/stories#unfinished"
