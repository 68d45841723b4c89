"""The children's page (/children): a household adds, changes and removes its profiles
from a form (and over JSON), and no story already asked for changes with them."""

from __future__ import annotations

import re

import pytest

from app.shelf.children import CHILDREN_MAX
from tests.helpers.app import ACCEPT_JSON, OWN_ORIGIN, serve
from tests.helpers.sql import execute, fetch_val
from tests.web.test_children import add_child, written

pytestmark = pytest.mark.anyio

HTML = {"Accept": "text/html"}
# The page's "Yes, remove it" form has no field but the csrf_token (none without a password):
# a browser posts it empty, as a form.
EMPTY_FORM = {"content": b"", "headers": {"Content-Type": "application/x-www-form-urlencoded"}}
MIA = {"name": "Mia", "age": "5", "language": "es", "length": "short", "likes": "foxes",
       "companions": "Pip, a little green dinosaur"}


async def profiles(http) -> list[dict]:
    return (await http.get("/children", headers=ACCEPT_JSON)).json()["children"]


async def test_a_child_added_from_the_page_gets_a_one_tap_button(own_pages, db):
    page = await own_pages.get("/children", headers=HTML)
    assert page.status_code == 200 and "Add a child" in page.text
    assert "Add your children" in (await own_pages.get("/")).text  # the home page says where
    added = await own_pages.post("/children", data=MIA)
    assert added.status_code == 303
    (mia,) = await profiles(own_pages)
    assert added.headers["location"] == f"/children#child-{mia['child_id']}"
    assert mia == {"child_id": mia["child_id"], "name": "Mia", "age": 5, "length": "short",
                   "language": "es", "likes": "foxes",
                   "companions": "Pip, a little green dinosaur"}
    page = (await own_pages.get("/children", headers=HTML)).text
    assert ">Pip, a little green dinosaur</textarea>" in page  # her form, to change them
    assert "with <bdi>Pip, a little green dinosaur</bdi>" in page
    assert 'value="Mia"' in page and "Save <bdi>Mia</bdi>" in page and "Add another child" in page
    assert "Tonight, for <bdi>Mia</bdi>" in (await own_pages.get("/")).text


async def test_empty_boxes_are_not_given(own_pages):
    assert (await own_pages.post("/children", data={"name": "Theo", "age": "", "language": "",
                                                  "length": "", "likes": " ",
                                                  "companions": ""})).status_code == 303
    (theo,) = await profiles(own_pages)
    assert (theo["age"], theo["language"], theo["length"], theo["likes"],
            theo["companions"]) == (None, None, None, None, None)


@pytest.mark.parametrize(("form", "said"), [
    ({"name": ""}, "name is required"),
    ({"name": "Mia", "age": "13"}, "age must be a whole number from 1 to 12."),
    ({"name": "Mia", "age": "five"}, "age must be a whole number from 1 to 12."),
    ({"name": "Mia", "language": "xx"}, "language must be one of"),
    ({"name": "Mia", "likes": "y" * 201}, "likes must be at most 200 characters."),
    ({"name": "Mia", "companions": "z" * 201}, "companions must be at most 200 characters."),
])
async def test_a_form_not_valid_is_shown_again_with_what_was_typed(own_pages, db, form, said):
    refused = await own_pages.post("/children", data=form)
    assert refused.status_code == 422
    assert said in refused.text and 'aria-invalid="true"' in refused.text
    if form["name"]:
        assert f'value="{form["name"]}"' in refused.text
    assert await fetch_val(db, "SELECT count(*) FROM children") == 0


@pytest.mark.slow
async def test_a_profile_changed_changes_no_story_written_for_it(own_pages):
    mia = await add_child(own_pages, {"name": "Mia", "age": 5, "language": "es"})
    story = await written(own_pages, {"prompt": "a sleepy owl", "child_id": mia["child_id"]})
    changed = await own_pages.post(f"/children/{mia['child_id']}",
                                 data={"name": "Amelia", "age": "6", "language": "fr"})
    assert changed.status_code == 303
    assert changed.headers["location"] == f"/children#child-{mia['child_id']}"
    (amelia,) = await profiles(own_pages)
    assert (amelia["name"], amelia["age"], amelia["language"]) == ("Amelia", 6, "fr")
    again = (await own_pages.get(f"/stories/{story['story_id']}", headers=ACCEPT_JSON)).json()
    assert (again["child_name"], again["age"], again["language"]) == ("Mia", 5, "es")
    # A refused change keeps the profile as it was, and the form as it was typed.
    refused = await own_pages.post(f"/children/{mia['child_id']}", data={"name": "Amelia",
                                                                       "age": "40"})
    assert refused.status_code == 422 and 'value="40"' in refused.text
    assert (await profiles(own_pages))[0]["age"] == 6


@pytest.mark.slow
async def test_a_profile_changed_over_json(own_pages):
    mia = await add_child(own_pages, {"name": "Mia"})
    changed = await own_pages.post(f"/children/{mia['child_id']}",
                                 json={"name": "Mia", "likes": "the sea"})
    assert changed.status_code == 200
    assert changed.json() == {**mia, "likes": "the sea"}
    refused = await own_pages.post(f"/children/{mia['child_id']}", json={"name": "Mia", "age": 0})
    assert refused.status_code == 422 and "age" in refused.json()["error"]["message"]
    missing = await own_pages.post("/children/424242", json={"name": "Nobody"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.slow
async def test_a_profile_removed_takes_its_button_but_no_story(own_pages):
    mia = await add_child(own_pages, {"name": "Mia"})
    theo = await add_child(own_pages, {"name": "Theo"})
    story = await written(own_pages, {"prompt": "a sleepy owl", "child_id": mia["child_id"]})
    removed = await own_pages.post(f"/children/{mia['child_id']}/delete", **EMPTY_FORM)
    assert removed.status_code == 303 and removed.headers["location"] == "/children"
    assert [child["name"] for child in await profiles(own_pages)] == ["Theo"]
    home = (await own_pages.get("/")).text
    assert "Tonight, for <bdi>Mia</bdi>" not in home and "Tonight, for <bdi>Theo</bdi>" in home
    kept = await own_pages.get(f"/stories/{story['story_id']}", headers=ACCEPT_JSON)
    assert kept.status_code == 200 and kept.json()["child_name"] == "Mia"
    again = await own_pages.post(f"/children/{mia['child_id']}/delete", **EMPTY_FORM)
    assert again.status_code == 404
    gone = await own_pages.post(f"/children/{theo['child_id']}/delete",
                              headers={"Content-Type": "application/json"})
    assert gone.status_code == 204 and await profiles(own_pages) == []


@pytest.mark.slow
async def test_nothing_changes_from_another_origin(make_app, db):
    async with serve(make_app()) as http:
        mia = await add_child(http, {"name": "Mia"})
        evil = {"Origin": "http://evil.test"}
        for path, form in (("/children", {"name": "Eve"}),
                           (f"/children/{mia['child_id']}", {"name": "Eve"}),
                           (f"/children/{mia['child_id']}/delete", {"csrf_token": ""}),
                           ("/children/bedtime", {"bedtime": "20:00"})):
            assert (await http.post(path, data=form, headers=evil)).status_code == 403
        assert await profiles(http) == [mia]
        assert str(await fetch_val(db, "SELECT bedtime FROM household")) == "18:30:00"


@pytest.mark.slow
async def test_json_is_the_answer_unless_a_browser_asks_for_the_page(client):
    await add_child(client, {"name": "Mia"})
    for accept in ({}, {"Accept": "*/*"}, ACCEPT_JSON):
        answer = await client.get("/children", headers=accept)
        assert answer.headers["content-type"].startswith("application/json"), accept
    page = await client.get("/children", headers={
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html")


async def test_a_household_keeps_a_bounded_number_of_profiles(client, db):
    await execute(db, "INSERT INTO children (name) SELECT 'Child ' || n "
                      "FROM generate_series(1, :n) AS n", {"n": CHILDREN_MAX})
    refused = await client.post("/children", json={"name": "One more"})
    assert refused.status_code == 422
    assert f"up to {CHILDREN_MAX}" in refused.json()["error"]["message"]
    assert await fetch_val(db, "SELECT count(*) FROM children") == CHILDREN_MAX


# -- the household's bedtime (issue 29): when the automatic theme turns to Night ------------------


@pytest.mark.slow
async def test_bedtime_is_half_past_six_until_set_and_every_page_carries_it(own_pages, db):
    page = (await own_pages.get("/children", headers=HTML)).text
    assert 'name="bedtime" type="time"' in page and 'value="18:30"' in page
    assert 'data-bedtime="18:30"' in (await own_pages.get("/")).text
    saved = await own_pages.post("/children/bedtime", data={"bedtime": "19:15"})
    assert saved.status_code == 303 and saved.headers["location"] == "/children#bedtime"
    assert str(await fetch_val(db, "SELECT bedtime FROM household")) == "19:15:00"
    assert 'value="19:15"' in (await own_pages.get("/children", headers=HTML)).text
    for path in ("/", "/stories", "/children"):
        shown = (await own_pages.get(path, headers=HTML)).text
        assert 'data-bedtime="19:15"' in shown, path
        assert "From <time data-night-from-shown>18:45</time> until 07:00" in shown, path
    over_json = await own_pages.post("/children/bedtime", json={"bedtime": "18:00"})
    assert over_json.status_code == 200 and over_json.json() == {"bedtime": "18:00"}


@pytest.mark.parametrize(("typed", "said"), [
    ("", "Bedtime must be a time of day"),
    ("7pm", "Bedtime must be a time of day"),
    ("25:00", "Bedtime must be a time of day"),
    ("18:30:15", "Bedtime must be a time of day"),
    ("15:59", "Bedtime must be in the evening, from 16:00 to 23:59."),
    ("00:30", "Bedtime must be in the evening"),
])
async def test_a_bedtime_not_valid_is_refused_naming_the_field(own_pages, db, typed, said):
    refused = await own_pages.post("/children/bedtime", data={"bedtime": typed})
    assert refused.status_code == 422
    assert said in refused.text
    assert 'id="bedtime-time" name="bedtime"' in refused.text
    assert 'aria-invalid="true" aria-describedby="bedtime-error"' in refused.text
    assert f'value="{typed}"' in refused.text  # what was typed, to correct
    over_json = await own_pages.post("/children/bedtime", json={"bedtime": typed or None})
    assert over_json.status_code == 422
    assert over_json.json()["error"]["message"].startswith("Bedtime must")
    assert str(await fetch_val(db, "SELECT bedtime FROM household")) == "18:30:00"


async def test_a_bedtime_needs_the_pages_csrf_token(make_app, db):
    app = make_app(household_password="pw", allow_open=False)
    async with serve(app) as http:  # no Origin: only the token can let a post in
        signed_in = await http.post("/login", data={"password": "pw"},
                                    headers={"Origin": OWN_ORIGIN})
        assert signed_in.status_code == 303
        page = (await http.get("/children", headers=HTML)).text
        form = page[page.index('action="/children/bedtime"'):]
        token = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
        refused = await http.post("/children/bedtime", data={"bedtime": "19:00"})
        assert refused.status_code == 403
        assert str(await fetch_val(db, "SELECT bedtime FROM household")) == "18:30:00"
        saved = await http.post("/children/bedtime", data={"bedtime": "19:00",
                                                          "csrf_token": token})
        assert saved.status_code == 303
    assert str(await fetch_val(db, "SELECT bedtime FROM household")) == "19:00:00"


async def test_a_profile_reads_its_age_in_years(own_pages):
    await add_child(own_pages, {"name": "Mia", "age": 5, "language": "en"})
    await add_child(own_pages, {"name": "Bo", "age": 1})
    page = (await own_pages.get("/children", headers=HTML)).text
    assert "5 years · English" in page
    assert "1 year · any language" in page
    assert '<summary class="link-button quieter"><span class="when-closed">Remove…' in page
