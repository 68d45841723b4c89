"""The household UI over HTTP: the pages, the status card, the no-JS paths, the library."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

import anyio
import pytest

from app.queue.store import JobStore
from app.shelf.household import DEFAULT_BEDTIME
from app.web.preferences import auto_span, is_night, shown_theme
from tests.helpers.app import ACCEPT_JSON, serve, wait_for_job
from tests.helpers.forms import HX, finished_story, form_key, job_id_of, submit
from tests.helpers.shelving import shelve
from tests.helpers.sql import fetch_one, fetch_val
from tests.helpers.statements import statements_run

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages


POLLING = ('hx-trigger="every 3s"', 'hx-swap="outerHTML"', "hx-get=")


def card_tag(html: str) -> str:
    """The status card's opening tag, where the polling attributes live."""
    match = re.search(r"<article[^>]*>", html)
    assert match, html
    return match.group(0)


def polls(html: str) -> bool:
    tag = card_tag(html)
    present = [attribute in tag for attribute in POLLING]
    assert all(present) or not any(present), tag  # all three, or none
    return all(present)


async def test_home_has_the_form_with_a_fresh_hidden_key_each_render(client):
    first = await client.get("/")
    second = await client.get("/")
    assert first.status_code == 200
    assert 'hx-post="/stories/generate"' in first.text
    assert 'method="post" action="/stories/generate"' in first.text
    for name in ("prompt", "child_name", "age", "length"):
        assert f'name="{name}"' in first.text
    assert form_key(first.text) != form_key(second.text)
    assert first.headers["cache-control"] == "no-store"
    assert "<script>" not in first.text  # only <script src=...>: a strict CSP can follow
    assert 'data-idea="a brave little dragon"' in first.text


async def test_form_post_without_htmx_redirects_to_the_job_page(client):
    response = await submit(client)
    assert response.status_code == 303
    assert re.fullmatch(r"/stories/jobs/\d+", response.headers["location"])
    page = await client.get(response.headers["location"])
    assert page.status_code == 200
    assert 'class="card job-card' in page.text


async def test_htmx_post_answers_the_card_and_a_fresh_form_out_of_band(client):
    key = form_key((await client.get("/")).text)
    response = await submit(client, key=key, htmx=True, child_name="Mia", age="5")
    assert response.status_code == 202
    assert 'class="card job-card' in response.text
    assert 'hx-swap-oob="true"' in response.text
    assert form_key(response.text) != key
    assert 'value="Mia"' in response.text  # remembered for the next story
    assert "HX-Request" in response.headers["vary"]


async def test_an_htmx_submit_reads_no_more_when_more_recent_stories_are_listed(make_app, db):
    """Its answer is the new card and the form again: the home page's cards of recent jobs,
    one or more statements each, are not read for it."""
    counts = []
    async with serve(make_app(worker_concurrency=0), from_own_pages=True) as client:
        for recent in (1, 6):  # finished just now, so the home page shows their cards
            for n in range(recent):
                await shelve(JobStore(db), f"recent-{recent}-{n}", title=f"Night {n}")
            key = form_key((await client.get("/")).text)
            with statements_run() as statements:
                response = await submit(client, key=key, htmx=True)
            assert response.status_code == 202 and 'hx-swap-oob="true"' in response.text
            counts.append(len(statements))
    assert counts[0] == counts[1], counts


async def test_double_submit_makes_one_job(client, db):
    key = form_key((await client.get("/")).text)
    first, second = await submit(client, key=key), await submit(client, key=key)
    assert first.headers["location"] == second.headers["location"]
    with_htmx = await submit(client, key=key, htmx=True)
    assert job_id_of(with_htmx) == job_id_of(first)
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_card_polls_while_unfinished_and_stops_once_finished(client, fake_llm):
    fake_llm.hold()
    job_id = job_id_of(await submit(client))
    await anyio.to_thread.run_sync(fake_llm.wait_for_call, job_id)
    card = await client.get(f"/stories/jobs/{job_id}", headers=HX)
    assert card.status_code == 200
    assert card.text.lstrip().startswith("<article")  # the fragment, not a page
    assert polls(card.text)
    assert f'hx-get="/stories/jobs/{job_id}"' in card_tag(card.text)
    assert "<progress" in card.text
    assert "HX-Request" in card.headers["vary"]

    fake_llm.release()
    await wait_for_job(client, job_id)
    card = await client.get(f"/stories/jobs/{job_id}", headers=HX)
    assert not polls(card.text)
    assert "Read the story" in card.text
    assert f"The Story of Job {job_id}" in card.text


async def test_pending_card_shows_its_place_in_line(client, fake_llm):
    fake_llm.hold()
    running = job_id_of(await submit(client))
    await anyio.to_thread.run_sync(fake_llm.wait_for_call, running)
    waiting = job_id_of(await submit(client, prompt="a trip to the moon"))
    card = await client.get(f"/stories/jobs/{waiting}", headers=HX)
    assert "Number 1 in line" in card.text
    home = await client.get("/")
    assert home.text.count('hx-trigger="every 3s"') == 2  # each card polls on its own
    fake_llm.release()


async def test_job_page_refreshes_itself_without_javascript_until_done(client, fake_llm):
    fake_llm.hold()
    job_id = job_id_of(await submit(client))
    page = await client.get(f"/stories/jobs/{job_id}")
    assert '<noscript><meta http-equiv="refresh" content="3"></noscript>' in page.text
    fake_llm.release()
    job = await wait_for_job(client, job_id)
    page = await client.get(f"/stories/jobs/{job_id}")
    assert 'http-equiv="refresh"' not in page.text
    assert f'href="/stories/{job["story_id"]}"' in page.text


async def test_field_errors_are_shown_beside_the_field_with_the_input_kept(client, db):
    response = await submit(client, prompt="   ", child_name="Mia", age="13", length="long")
    assert response.status_code == 422
    assert 'id="prompt-error"' in response.text
    assert 'value="Mia"' in response.text
    response = await submit(client, prompt="a kind moon", child_name="Mia", age="13")
    assert response.status_code == 422
    assert 'id="age-error">The age is a number from 1 to 12' in response.text
    assert 'value="13"' in response.text
    assert "a kind moon</textarea>" in response.text
    htmx = await submit(client, htmx=True, prompt="a kind moon", age="0")
    assert htmx.status_code == 422
    assert htmx.headers["hx-retarget"] == "#story-form"
    assert htmx.text.lstrip().startswith("<form")
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


async def test_a_full_queue_is_a_friendly_sentence_and_writes_nothing(make_app, fake_llm, db):
    async with serve(make_app(queue_max=1), from_own_pages=True) as client:
        fake_llm.hold()
        running = job_id_of(await submit(client))
        await anyio.to_thread.run_sync(fake_llm.wait_for_call, running)
        await submit(client)  # waits in the queue: it is full now
        refused = await submit(client, prompt="a garden that grows at night")
        assert refused.status_code == 429
        assert "please try again shortly" in refused.text
        assert "a garden that grows at night</textarea>" in refused.text
        htmx = await submit(client, htmx=True)
        assert htmx.status_code == 429 and 'role="alert"' in htmx.text
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 2
        fake_llm.release()


async def test_form_defaults_come_from_this_devices_last_story(client):
    await submit(client, **{"for": "other", "child_name": "Mia", "age": "5", "length": "long"})
    home = (await client.get("/")).text
    assert ('id="child_name" name="child_name" maxlength="40" autocomplete="off" dir="auto"'
            ' value="Mia"') in home
    assert 'value="5"' in home
    assert 'value="long" checked' in home
    assert "a brave little dragon</textarea>" not in home  # tonight's idea starts empty


async def test_an_idea_link_fills_the_prompt_without_javascript(client):
    home = await client.get("/", params={"idea": "a trip to the moon"})
    assert "a trip to the moon</textarea>" in home.text
    unknown = await client.get("/", params={"idea": "<b>anything</b>"})
    assert "&lt;b&gt;" not in unknown.text.split("<textarea", 1)[1].split("</textarea>")[0]


async def test_story_text_with_a_script_tag_is_shown_as_text(client):
    story_id = await finished_story(client, prompt="<script>alert('boo')</script> a kind owl")
    page = await client.get(f"/stories/{story_id}")
    assert page.status_code == 200
    # The words stay, as text; the tag is dropped as any markup a model writes is.
    assert "alert(" in page.text
    assert "<script>alert" not in page.text
    assert 'class="story-text"' in page.text


async def test_failed_job_offers_try_again_which_makes_one_new_job(client, fake_llm, db):
    fake_llm.mode = "500"
    failed = job_id_of(await submit(client, child_name="Theo", age="4"))
    assert (await wait_for_job(client, failed))["status"] == "failed"
    card = await client.get(f"/stories/jobs/{failed}", headers=HX)
    assert "Try again" in card.text
    assert f'action="/stories/jobs/{failed}/retry"' in card.text
    assert not polls(card.text)

    fake_llm.mode = "ok"
    first = await client.post(f"/stories/jobs/{failed}/retry")
    again = await client.post(f"/stories/jobs/{failed}/retry", headers=HX)  # a double tap
    assert first.status_code == 303
    retried = job_id_of(first)
    assert retried != failed and job_id_of(again) == retried
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 2
    row = await fetch_one(db, "SELECT prompt, child_name, age FROM story_jobs WHERE id = :id",
                             {"id": retried})
    assert (row["prompt"], row["child_name"], row["age"]) == ("a brave little dragon", "Theo", 4)
    assert (await wait_for_job(client, retried))["status"] == "completed"
    assert fake_llm.calls_for(failed) == 1 and fake_llm.calls_for(retried) == 1


async def test_library_lists_newest_first_and_searches_title_or_child(client):
    first = await finished_story(client, child_name="Mia")
    second = await finished_story(client, child_name="Theo")
    page = await client.get("/stories")
    assert page.status_code == 200
    html = page.text
    assert html.index(f'href="/stories/{second}"') < html.index(f'href="/stories/{first}"')
    assert "for <bdi>Mia</bdi>" in page.text and "<time datetime=" in page.text
    by_child = await client.get("/stories", params={"q": "theo"})
    assert f'href="/stories/{second}"' in by_child.text
    assert f'href="/stories/{first}"' not in by_child.text
    by_title = await client.get("/stories", params={"q": f"Job {first}"}, headers=HX)
    assert by_title.text.lstrip().startswith("<ul")  # the list alone, for htmx
    assert f'href="/stories/{first}"' in by_title.text
    none = await client.get("/stories", params={"q": "100%_"})
    assert "No stories match" in none.text
    listing = (await client.get("/stories", headers=ACCEPT_JSON)).json()
    assert [s["story_id"] for s in listing["stories"]] == [second, first]


@pytest.mark.slow
async def test_deleting_a_story_removes_it_everywhere(client):
    kept = await finished_story(client)
    gone = await finished_story(client)
    response = await client.post(f"/stories/{gone}/delete")
    assert response.status_code == 303
    assert response.headers["location"] == f"/stories?deleted={gone}"  # with its Undo
    assert (await client.get(f"/stories/{gone}")).status_code == 404
    assert (await client.get(f"/stories/{gone}", headers=ACCEPT_JSON)).status_code == 404
    assert f'href="/stories/{gone}"' not in (await client.get("/stories")).text
    listing = (await client.get("/stories", headers=ACCEPT_JSON)).json()
    assert [s["story_id"] for s in listing["stories"]] == [kept]
    assert (await client.post(f"/stories/{gone}/delete")).status_code == 404
    with_htmx = await client.post(f"/stories/{kept}/delete", headers=HX)
    assert with_htmx.status_code == 200 and "was deleted" in with_htmx.text


@pytest.mark.slow
async def test_library_offers_delete_behind_a_small_menu_and_the_story_page_asks(client):
    story_id = await finished_story(client)
    page = (await client.get("/stories")).text
    assert '<details class="row-menu">' in page
    assert f'action="/stories/{story_id}/delete"' in page
    story_page = (await client.get(f"/stories/{story_id}")).text
    assert '<details class="confirm">' in story_page
    assert "you can undo it" in story_page


@pytest.mark.slow
async def test_favourites_are_marked_with_one_tap_and_listed_first(client):
    older = await finished_story(client)
    newer = await finished_story(client)
    response = await client.post(
        f"/stories/{older}/favourite", data={"favourite": "1", "next": "/stories"}
    )
    assert response.status_code == 303 and response.headers["location"] == "/stories"
    page = (await client.get("/stories")).text
    assert page.index(f'href="/stories/{older}"') < page.index(f'href="/stories/{newer}"')
    toggle = await client.post(f"/stories/{older}/favourite", data={"favourite": "0"}, headers=HX)
    assert 'aria-pressed="false"' in toggle.text
    page = (await client.get("/stories")).text
    assert page.index(f'href="/stories/{newer}"') < page.index(f'href="/stories/{older}"')
    offsite = await client.post(f"/stories/{older}/favourite", data={"next": "//evil.example"})
    assert offsite.headers["location"] == f"/stories/{older}"


@pytest.mark.slow
async def test_reading_preferences_are_remembered(client):
    story_id = await finished_story(client)
    page = await client.get(f"/stories/{story_id}")
    assert 'data-theme-choice="auto"' in page.text  # Night at bedtime, by itself
    assert f'data-theme="{theme_by_the_clock()}"' in page.text
    assert "data-read-aloud hidden" in page.text  # shown by app.js only where supported
    response = await client.post(
        "/preferences", data={"theme": "light", "text_size": "larger",
                              "next": f"/stories/{story_id}"},
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/stories/{story_id}"
    client.cookies.update({"theme": response.cookies["theme"],
                           "text_size": response.cookies["text_size"]})
    page = await client.get(f"/stories/{story_id}")
    assert 'data-theme="light"' in page.text and 'data-text-size="4"' in page.text


@pytest.mark.slow
async def test_demo_mode_is_said_plainly(make_app):
    async with serve(make_app(storyteller="demo", demo_delay_s=0), from_own_pages=True) as client:
        assert "Demo storyteller" in (await client.get("/")).text
    async with serve(make_app(), from_own_pages=True) as client:
        assert "Demo storyteller" not in (await client.get("/")).text


@pytest.mark.slow
async def test_a_refused_form_says_so_once_at_the_form_not_in_every_card(
    make_app, fake_llm, db
):
    async with serve(make_app(queue_max=1), from_own_pages=True) as client:
        fake_llm.hold()
        running = job_id_of(await submit(client))
        await anyio.to_thread.run_sync(fake_llm.wait_for_call, running)
        await submit(client, prompt="a trip to the moon")  # waits: the queue is full now
        refused = await submit(client, prompt="a garden that grows at night")
        assert refused.status_code == 429
        assert refused.text.count('class="card job-card') == 2
        assert refused.text.count("please try again shortly") == 1
        form = refused.text.split('id="story-form"', 1)[1].split("</form>", 1)[0]
        assert "please try again shortly" in form
        fake_llm.release()


@pytest.mark.slow
async def test_theme_and_text_size_are_in_every_pages_header(client):
    story_id = await finished_story(client)
    for path in ("/", "/stories", f"/stories/{story_id}"):
        page = (await client.get(path)).text
        header = page.split('<header class="site-header">', 1)[1].split("</header>", 1)[0]
        assert 'action="/preferences"' in header, path
        for theme in ("light", "dark", "night"):
            assert f'value="{theme}" aria-label="{theme.title()} theme"' in header
        assert f'name="next" value="{path}"' in header
        assert 'aria-pressed="true">Auto</button>' in header  # the default, as chosen
        assert 'From <time data-night-from-shown>18:00</time>' in header  # Night from
        assert ">3 of 5</output>" in header
    response = await client.post("/preferences", data={"theme": "night", "next": "/stories"})
    assert response.status_code == 303 and response.headers["location"] == "/stories"
    client.cookies.update({"theme": response.cookies["theme"]})
    page = (await client.get("/stories")).text
    assert 'data-theme="night"' in page
    assert '<meta name="color-scheme" content="dark">' in page


async def test_text_size_buttons_stop_at_the_ends(client):
    def buttons(page: str) -> tuple[str, str]:
        smaller = re.search(r'<button[^>]*value="smaller"[^>]*>', page)[0]
        larger = re.search(r'<button[^>]*value="larger"[^>]*>', page)[0]
        return smaller, larger

    for size, smaller_off, larger_off in (("1", True, False), ("3", False, False),
                                          ("5", False, True)):
        client.cookies.set("text_size", size)
        page = (await client.get("/")).text
        smaller, larger = buttons(page)
        assert ("disabled" in smaller, "disabled" in larger) == (smaller_off, larger_off), size
        assert f">{size} of 5</output>" in page
    response = await client.post("/preferences", data={"text_size": "larger"})
    assert response.cookies["text_size"] == "5"  # already the largest: it stays


async def test_a_note_that_is_not_the_story_is_marked_so_it_is_never_read_aloud(make_app):
    async with serve(make_app(storyteller="demo", demo_delay_s=0), from_own_pages=True) as client:
        story_id = await finished_story(client)
        page = (await client.get(f"/stories/{story_id}")).text
    text = re.split(r"data-story-text[^>]*>", page, maxsplit=1)[1].split("</div>", 1)[0]
    assert re.search(r'<p class="story-note" data-not-story>\(This story was written by the demo',
                     text)
    assert text.count("data-not-story") == 1
    assert "data-wake-lock" in page and "data-voice" in page and "data-sleep" in page


async def test_a_retried_cards_try_again_leads_to_the_new_story(client, fake_llm):
    fake_llm.mode = "500"
    failed = job_id_of(await submit(client))
    assert (await wait_for_job(client, failed))["status"] == "failed"
    fake_llm.mode = "ok"
    retried = job_id_of(await client.post(f"/stories/jobs/{failed}/retry"))
    for card in (await client.get(f"/stories/jobs/{failed}", headers=HX),
                 await client.get(f"/stories/jobs/{failed}")):
        assert f'href="/stories/jobs/{retried}"' in card.text and "See the new story" in card.text
        assert f'action="/stories/jobs/{failed}/retry"' not in card.text
        assert "Try again" not in card.text
    home = (await client.get("/")).text
    assert f'action="/stories/jobs/{failed}/retry"' not in home


async def test_a_retry_refused_by_the_daily_limit_offers_no_live_try_again(make_app, fake_llm):
    async with serve(make_app(daily_story_limit=1), from_own_pages=True) as client:
        fake_llm.mode = "500"
        failed = job_id_of(await submit(client))
        assert (await wait_for_job(client, failed))["status"] == "failed"
        for headers in (HX, {}):
            refused = await client.post(f"/stories/jobs/{failed}/retry", headers=headers)
            assert "for today" in refused.text  # the notice, on the card
            assert f'action="/stories/jobs/{failed}/retry"' not in refused.text
            assert ">Try again<" not in refused.text


async def test_a_job_waiting_behind_a_running_one_says_its_place_not_starting(
    make_app, fake_llm
):
    async with serve(make_app(), from_own_pages=True) as earlier:
        for _ in range(3):  # quick stories: the next app expects a story in moments
            await finished_story(earlier)
    async with serve(make_app(), from_own_pages=True) as client:
        fake_llm.hold()
        running = job_id_of(await submit(client))
        await anyio.to_thread.run_sync(fake_llm.wait_for_call, running)
        waiting = job_id_of(await submit(client, prompt="a trip to the moon"))
        card = (await client.get(f"/stories/jobs/{waiting}", headers=HX)).text
        fake_llm.release()
    assert "Number 1 in line" in card
    assert "Starting…" not in card


@pytest.mark.slow
async def test_a_deleted_storys_page_offers_to_restore_it(client):
    story_id = await finished_story(client)
    title = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()["title"]
    await client.post(f"/stories/{story_id}/delete")
    page = await client.get(f"/stories/{story_id}")
    assert page.status_code == 404  # not on the shelf (an offline copy is dropped)
    assert title in page.text
    assert "This story was deleted on" in page.text
    assert f'action="/stories/{story_id}/restore"' in page.text and ">Restore<" in page.text
    assert "There is no story with that number" not in page.text
    gone = await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
    restored = await client.post(f"/stories/{story_id}/restore", data={"next": ""})
    assert restored.headers["location"] == f"/stories/{story_id}"
    assert (await client.get(f"/stories/{story_id}")).status_code == 200
    never = await client.get("/stories/999999")
    assert never.status_code == 404 and "There is no story with that number" in never.text


async def test_sign_in_is_the_pages_primary_button(make_app):
    async with serve(make_app(household_password="pw", allow_open=False)) as http:
        page = (await http.get("/login")).text
    assert '<button class="button primary" type="submit">Sign in</button>' in page


def theme_by_the_clock() -> str:
    """What "Automatic" shows now in the tests' time zone (UTC) for the default bedtime."""
    return "night" if is_night(datetime.now(UTC), DEFAULT_BEDTIME) else "dark"


@pytest.mark.parametrize(
    ("choice", "clock", "bedtime", "shown"),
    [
        ("auto", "21:00", "18:30", "night"),
        ("auto", "12:00", "18:30", "dark"),
        ("auto", "17:59", "18:30", "dark"),
        ("auto", "18:00", "18:30", "night"),  # half an hour before bedtime
        ("auto", "06:59", "18:30", "night"),  # still night until 07:00
        ("auto", "07:00", "18:30", "dark"),
        ("auto", "20:00", "21:00", "dark"),  # the household's later bedtime
        ("auto", "23:40", "23:59", "night"),
        ("auto", "23:00", "23:59", "dark"),
        ("light", "21:00", "18:30", "light"),  # a choice stays as chosen at night
        ("dark", "23:00", "18:30", "dark"),
        ("night", "12:00", "18:30", "night"),
    ],
)
def test_automatic_is_night_from_half_an_hour_before_bedtime_unless_a_theme_is_chosen(
    choice, clock, bedtime, shown
):
    now = datetime.combine(date(2026, 12, 1), time.fromisoformat(clock), tzinfo=UTC)
    assert shown_theme(choice, now, time.fromisoformat(bedtime)) == shown


@pytest.mark.parametrize(
    ("clock", "since", "until"),
    [
        ("21:00", "2026-12-01T18:00", "2026-12-02T07:00"),
        ("06:00", "2026-11-30T18:00", "2026-12-01T07:00"),
        ("12:00", "2026-12-01T07:00", "2026-12-01T18:00"),
        ("18:00", "2026-12-01T18:00", "2026-12-02T07:00"),  # the turn itself: Night from it
    ],
)
def test_auto_holds_between_its_turns_as_the_page_tells_the_device(clock, since, until):
    """The span a page gives shelf.js (data-auto-from/-until): "auto" does not change in
    it, and it does at both of its ends."""
    bedtime = time(18, 30)
    now = datetime.combine(date(2026, 12, 1), time.fromisoformat(clock), tzinfo=UTC)
    start, end = auto_span(now, bedtime)
    assert (start, end) == (datetime.fromisoformat(since).replace(tzinfo=UTC),
                            datetime.fromisoformat(until).replace(tzinfo=UTC))
    shown = shown_theme("auto", now, bedtime)
    assert shown_theme("auto", start, bedtime) == shown
    assert shown_theme("auto", end - timedelta(minutes=1), bedtime) == shown
    assert shown_theme("auto", end, bedtime) != shown


async def test_every_page_carries_the_households_bedtime_and_zone_for_the_device(client):
    page = (await client.get("/stories")).text
    assert 'data-bedtime="18:30" data-night-until="07:00" data-tz="UTC"' in page
    assert "From <time data-night-from-shown>18:00</time> until 07:00" in page
    assert 'href="/children#bedtime"' in page  # where to change it
    ignored = await client.post("/preferences", data={"night_from": "22", "next": "/"})
    assert "night_from" not in ignored.cookies  # no hour of the device's own any more
    client.cookies.update({"theme": "light"})
    assert 'data-theme="light" data-theme-choice="light"' in (await client.get("/")).text
