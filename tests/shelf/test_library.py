"""The library: full-text search over what a story was about, its title and the child's
name; rows that say enough to tell stories apart; Undo and the 30-day purge; paging."""

from __future__ import annotations

import re
import uuid
from datetime import UTC

import pytest

from app.queries import load_queries
from app.queue.check import Invariants
from app.queue.store import JobStore
from app.queue.sweeper import Sweeper
from app.shelf.store import ShelfStore
from tests.helpers.app import ACCEPT_JSON
from tests.helpers.shelving import shelve, shelve_many
from tests.helpers.sql import execute, fetch_all, fetch_val

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

HX = {"HX-Request": "true"}
ODD_INPUT = ["'", "''", '"owl"', "owl & moon", "&", "a:b", ":*", "owl:*", "\x00", "owl\x00moon",
             "!", "(owl", "owl | moon", "<->", "\\", "%_", "owl's", "😴", " ", "x" * 300,
             "'; DROP TABLE stories; --"]


async def ids(store: JobStore, search: str = "") -> list[int]:
    return [story.id for story in (await ShelfStore(store.db).library(search)).stories]


async def test_search_finds_a_story_by_a_word_of_its_request_its_child_and_its_title(db):
    store = JobStore(db)
    owl = await shelve(store, "k1", title="Mia and the Gentle Journey",
                       prompt="a sleepy owl who lost its hoot", child_name="Mia")
    dragon = await shelve(store, "k2", title="The Brave Little Dragon",
                          prompt="a dragon afraid of the dark", child_name="Theo")
    assert await ids(store, "owl") == [owl]  # only in what it was about
    assert await ids(store, "OWL") == [owl]
    assert await ids(store, "theo") == [dragon]  # the child
    assert await ids(store, "brave") == [dragon]  # the title
    assert await ids(store, "drag") == [dragon]  # a word's beginning, as it is typed
    assert await ids(store, "sleepy hoot") == [owl]  # every word, in any order
    assert await ids(store, "sleepy dragon") == []
    assert await ids(store, "gentle journey mia") == [owl]
    assert await ids(store) == [dragon, owl]  # no search: all of them, newest first


async def test_a_word_finds_its_other_forms_in_the_storys_own_language(db):
    store = JobStore(db)
    snail = await shelve(store, "k1", title="The Slow Night", prompt="a snail who carries the moon")
    hedgehogs = await shelve(store, "k2", title="Three Hedgehogs and a Lantern",
                             prompt="running through the leaves")
    escargot = await shelve(store, "k3", title="La nuit lente", prompt="un escargot qui dort",
                            language="fr")
    assert await ids(store, "snails") == [snail]  # the plural finds the singular
    assert await ids(store, "Snails moon") == [snail]
    assert await ids(store, "snai") == [snail]  # a word's beginning, as before
    assert await ids(store, "hedgehog") == [hedgehogs]  # and the singular the plural
    assert await ids(store, "runs") == [hedgehogs]
    assert await ids(store, "runn") == [hedgehogs]  # typed halfway: not a stem, a prefix
    assert await ids(store, "escargots") == [escargot]  # stemmed in French
    assert await ids(store, "the moon") == [snail]  # a stop word is no hindrance
    assert await ids(store, "snails hedgehog") == []


async def test_one_or_two_letters_are_a_plain_substring(db):
    store = JobStore(db)
    percent = await shelve(store, "k1", title="100% Sleepy", prompt="a lazy cat")
    bo = await shelve(store, "k2", title="Hush", prompt="a boat on the sea", child_name="Jo")
    assert await ids(store, "%") == [percent]  # literally, not a wildcard
    assert await ids(store, "_") == []
    assert await ids(store, "jo") == [bo]  # the name
    assert await ids(store, "oa") == [bo]  # inside a word of the request
    assert await ids(store, "zz") == []


async def test_odd_input_is_safe_in_the_store_and_over_http(db, client):
    store = JobStore(db)
    owl = await shelve(store, "k1", title="Owl's Night", prompt="an owl and the moon")
    for search in ODD_INPUT:
        found = await ids(store, search)
        assert found in ([], [owl]), search
    assert await ids(store, "owl & moon") == [owl]  # the signs are not operators
    assert await ids(store, '"owl"') == [owl]
    for search in ODD_INPUT:
        for headers in ({}, HX):
            response = await client.get("/stories", params={"q": search}, headers=headers)
            assert response.status_code == 200, search
    nul = await client.get("/stories?q=%00owl%00")
    assert nul.status_code == 200 and f'href="/stories/{owl}"' in nul.text


async def test_the_search_uses_the_gin_index_once_there_are_many_stories(db):
    await shelve_many(db, 5000, rare_word="owl", every=1000)
    # What autovacuum does by itself in a while: fresh statistics, and the GIN index's
    # pending list merged (until then the planner prices the index as if it were huge).
    await execute(db, "VACUUM ANALYZE stories")
    store = JobStore(db)
    found = (await ShelfStore(store.db).library("owl")).stories
    assert len(found) == 5 and all("owl" in (story.prompt or "") for story in found)
    query = load_queries()["search_library_words"]
    rows = await fetch_all(db, "EXPLAIN " + query, {"query": "owl:*", "limit": 51, "offset": 0})
    plan = "\n".join(row[0] for row in rows)
    # The planner chooses the index by itself (no `SET enable_seqscan = off` needed).
    assert "Bitmap Index Scan on stories_search " in plan, plan
    assert "Bitmap Index Scan on stories_search_stems" in plan, plan  # the stemmed words


async def test_rows_say_what_it_was_about_for_whom_how_long_and_when(db, client):
    store = JobStore(db)
    words = " ".join(["sleep"] * 480)  # four minutes, read aloud at 120 words a minute
    story_id = await shelve(store, "k1", title="Mia and the Gentle Journey",
                            prompt="a sleepy owl who lost its hoot", child_name="Mia", age=5,
                            length="medium", body=words)
    await shelve(store, "k2", title="Mia and the Gentle Journey", prompt="a whale who sings",
                 child_name="Mia")
    created = (await ShelfStore(store.db).get_story(story_id)).created_at.astimezone(UTC)
    page = (await client.get("/stories")).text
    row = page[page.index(f'href="/stories/{story_id}"'):]
    row = row[:row.index("</li>")]
    assert "a sleepy owl who lost its hoot" in row
    assert "for <bdi>Mia</bdi>, 5" in row and "medium" in row and "4 min" in row
    assert f"{created.day} {created:%B %Y, %H:%M}" in row  # the date and the time
    assert "a whale who sings" in page  # the other "Gentle Journey" tells itself apart


async def test_the_json_library_keeps_its_shape_and_no_longer_stops_at_500(db, client):
    await shelve_many(db, 510)
    listing = (await client.get("/stories", headers=ACCEPT_JSON)).json()
    assert list(listing) == ["stories"] and len(listing["stories"]) == 510
    assert all(set(s) == {"story_id", "title", "created_at"} for s in listing["stories"])
    times = [s["created_at"] for s in listing["stories"]]
    assert times == sorted(times, reverse=True)  # newest first, as ever


async def test_the_library_shows_50_at_a_time_with_more(db, client):
    await shelve_many(db, 120)
    first = (await client.get("/stories")).text
    assert first.count('class="shelf-item') == 50
    assert 'href="/stories?page=2"' in first and "More stories" in first
    second = await client.get("/stories", params={"page": "2"}, headers=HX)
    assert second.text.lstrip().startswith("<li")  # rows to put in place of "More"
    assert second.text.count('class="shelf-item') == 50 and "page=3" in second.text
    third = (await client.get("/stories?page=3")).text  # without JavaScript: the next page
    assert third.count('class="shelf-item') == 20 and "More stories" not in third
    seen = re.findall(r'class="shelf-link" href="/stories/(\d+)"', first + second.text + third)
    assert len(seen) == len(set(seen)) == 120
    searched = (await client.get("/stories", params={"q": "sheep"})).text
    assert 'href="/stories?q=sheep&amp;page=2"' in searched
    for odd in ("0", "-1", "x", "9" * 30, "99999"):
        assert (await client.get("/stories", params={"page": odd})).status_code == 200


async def test_undo_puts_a_deleted_story_back_in_its_place(db, client):
    store = JobStore(db)
    older = await shelve(store, "k1", title="Older")
    middle = await shelve(store, "k2", title="Middle")
    newer = await shelve(store, "k3", title="Newer")
    await ShelfStore(store.db).set_favourite(older, True)
    before = await ids(store)
    assert before == [older, newer, middle]
    deleted = await client.post(f"/stories/{middle}/delete", headers=HX)
    assert "was deleted" in deleted.text and f'hx-post="/stories/{middle}/restore"' in deleted.text
    assert await ids(store) == [older, newer]
    restored = await client.post(f"/stories/{middle}/restore", headers=HX)
    assert restored.status_code == 200
    assert restored.text.lstrip().startswith('<li class="shelf-item')  # the row, in place
    assert f'href="/stories/{middle}"' in restored.text
    assert await ids(store) == before
    again = await client.post(f"/stories/{middle}/restore", headers=HX)  # a double tap
    assert again.status_code == 200
    # Without JavaScript: the library says what was deleted, with its Undo.
    response = await client.post(f"/stories/{newer}/delete")
    page = (await client.get(response.headers["location"])).text
    assert "“<bdi>Newer</bdi>” was deleted." in page
    assert f'action="/stories/{newer}/restore"' in page
    back_to = re.search(r'name="next" value="([^"]+)"', page[page.index("/restore"):]).group(1)
    back = await client.post(f"/stories/{newer}/restore", data={"next": back_to})
    assert back.status_code == 303 and back.headers["location"] == f"/stories?restored={newer}"
    assert await ids(store) == before
    library = (await client.get(back.headers["location"])).text
    assert f'Restored: <a href="/stories/{newer}"><bdi>Newer</bdi></a>' in library
    assert "was deleted." not in library
    assert (await client.post("/stories/999/restore")).status_code == 404


async def test_recently_deleted_lists_stories_for_30_days_and_restores_them(db, client):
    store = JobStore(db)
    kept = await shelve(store, "k1", title="Kept")
    gone = await shelve(store, "k2", title="Gone a while", prompt="a quiet fox")
    assert "Recently deleted" not in (await client.get("/stories")).text
    await ShelfStore(store.db).delete_story(gone)
    assert "Recently deleted (1)" in (await client.get("/stories")).text
    page = (await client.get("/stories/deleted")).text
    assert "Gone a while" in page and "a quiet fox" in page and "Kept" not in page
    assert "gone for good on" in page
    back_to = re.search(r'name="next" value="([^"]+)"', page[page.index("/restore"):]).group(1)
    response = await client.post(f"/stories/{gone}/restore", data={"next": back_to})
    after = (await client.get(response.headers["location"])).text
    # Said, and linked:
    assert f'Restored: <a href="/stories/{gone}"><bdi>Gone a while</bdi></a>' in after
    assert "Nothing else was deleted" in after and "Nothing was deleted" not in after
    assert set(await ids(store)) == {kept, gone}
    assert "Restored:" not in (await client.get("/stories/deleted")).text  # once, not for ever
    assert "Nothing was deleted" in (await client.get("/stories/deleted")).text


async def test_the_purge_removes_only_stories_deleted_30_days_ago_or_more(db):
    store = JobStore(db)
    old = await shelve(store, "k1", title="Deleted 31 days ago")
    recent = await shelve(store, "k2", title="Deleted 29 days ago")
    shelved = await shelve(store, "k3", title="On the shelf")
    sequel = await shelve(store, "k4", title="What happened next", sequel_of=old)
    for story_id, days in ((old, 31), (recent, 29)):
        await execute(db, "UPDATE stories SET deleted_at = now() - make_interval(days => :days)"
                         " WHERE id = :id", {"id": story_id, "days": days})
    sweeper = Sweeper(store, boot_id=uuid.uuid4(), interval_s=300, threshold_min=8,
                      heartbeat_stale_s=60)
    result = await sweeper.sweep()
    assert result.purged == [old]
    remaining = {row["id"] for row in await fetch_all(db, "SELECT id FROM stories")}
    assert remaining == {recent, shelved, sequel}
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE story_id = :id",
                              {"id": old}) == 0
    # The sequel keeps its place, without the link.
    assert await ShelfStore(store.db).get_story(sequel) is not None
    assert (await ShelfStore(store.db).get_story(sequel)).request.sequel_of is None
    assert await ShelfStore(store.db).restore_story(old) is False
    assert await ShelfStore(store.db).restore_story(recent) is True
    assert (await sweeper.sweep()).purged == []
    assert await Invariants(store.db).ids("check_unreachable_stories") == []
    assert await Invariants(store.db).ids("check_completed_without_story") == []
