"""The children's page (/children): a household adds, changes and removes its profiles
from a form (and over JSON), and no story already asked for changes with them."""

from __future__ import annotations

import pytest

from app.shelf.children import CHILDREN_MAX
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.sql import execute, fetch_val
from tests.web.test_children import add_child, written

pytestmark = pytest.mark.anyio

HTML = {"Accept": "text/html"}
# The page's "Yes, remove it" form has no field but the csrf_token (none without a password):
# a browser posts it empty, as a form.
EMPTY_FORM = {"content": b"", "headers": {"Content-Type": "application/x-www-form-urlencoded"}}
MIA = {"name": "Mia", "age": "5", "language": "es", "length": "short", "likes": "foxes"}


async def profiles(http) -> list[dict]:
    return (await http.get("/children", headers=ACCEPT_JSON)).json()["children"]


@pytest.fixture
async def browser(make_app, fake_llm):
    async with serve(make_app(), from_own_pages=True) as http:
        yield http


async def test_a_child_added_from_the_page_gets_a_one_tap_button(browser, db):
    page = await browser.get("/children", headers=HTML)
    assert page.status_code == 200 and "Add a child" in page.text
    assert "Add your children" in (await browser.get("/")).text  # the home page says where
    added = await browser.post("/children", data=MIA)
    assert added.status_code == 303
    (mia,) = await profiles(browser)
    assert added.headers["location"] == f"/children#child-{mia['child_id']}"
    assert mia == {"child_id": mia["child_id"], "name": "Mia", "age": 5, "length": "short",
                   "language": "es", "likes": "foxes"}
    page = (await browser.get("/children", headers=HTML)).text
    assert 'value="Mia"' in page and "Save Mia" in page and "Add another child" in page
    assert "Tonight, for Mia" in (await browser.get("/")).text


async def test_empty_boxes_are_not_given(browser):
    assert (await browser.post("/children", data={"name": "Theo", "age": "", "language": "",
                                                  "length": "", "likes": " "})).status_code == 303
    (theo,) = await profiles(browser)
    assert (theo["age"], theo["language"], theo["length"], theo["likes"]) == (
        None, None, None, None)


@pytest.mark.parametrize(("form", "said"), [
    ({"name": ""}, "name is required"),
    ({"name": "Mia", "age": "13"}, "age must be a whole number from 1 to 12."),
    ({"name": "Mia", "age": "five"}, "age must be a whole number from 1 to 12."),
    ({"name": "Mia", "language": "xx"}, "language must be one of"),
    ({"name": "Mia", "likes": "y" * 201}, "likes must be at most 200 characters."),
])
async def test_a_form_not_valid_is_shown_again_with_what_was_typed(browser, db, form, said):
    refused = await browser.post("/children", data=form)
    assert refused.status_code == 422
    assert said in refused.text and 'aria-invalid="true"' in refused.text
    if form["name"]:
        assert f'value="{form["name"]}"' in refused.text
    assert await fetch_val(db, "SELECT count(*) FROM children") == 0


async def test_a_profile_changed_changes_no_story_written_for_it(browser):
    mia = await add_child(browser, {"name": "Mia", "age": 5, "language": "es"})
    story = await written(browser, {"prompt": "a sleepy owl", "child_id": mia["child_id"]})
    changed = await browser.post(f"/children/{mia['child_id']}",
                                 data={"name": "Amelia", "age": "6", "language": "fr"})
    assert changed.status_code == 303
    assert changed.headers["location"] == f"/children#child-{mia['child_id']}"
    (amelia,) = await profiles(browser)
    assert (amelia["name"], amelia["age"], amelia["language"]) == ("Amelia", 6, "fr")
    again = (await browser.get(f"/stories/{story['story_id']}", headers=ACCEPT_JSON)).json()
    assert (again["child_name"], again["age"], again["language"]) == ("Mia", 5, "es")
    # A refused change keeps the profile as it was, and the form as it was typed.
    refused = await browser.post(f"/children/{mia['child_id']}", data={"name": "Amelia",
                                                                       "age": "40"})
    assert refused.status_code == 422 and 'value="40"' in refused.text
    assert (await profiles(browser))[0]["age"] == 6


async def test_a_profile_changed_over_json(browser):
    mia = await add_child(browser, {"name": "Mia"})
    changed = await browser.post(f"/children/{mia['child_id']}",
                                 json={"name": "Mia", "likes": "the sea"})
    assert changed.status_code == 200
    assert changed.json() == {**mia, "likes": "the sea"}
    refused = await browser.post(f"/children/{mia['child_id']}", json={"name": "Mia", "age": 0})
    assert refused.status_code == 422 and "age" in refused.json()["error"]["message"]
    missing = await browser.post("/children/424242", json={"name": "Nobody"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


async def test_a_profile_removed_takes_its_button_but_no_story(browser):
    mia = await add_child(browser, {"name": "Mia"})
    theo = await add_child(browser, {"name": "Theo"})
    story = await written(browser, {"prompt": "a sleepy owl", "child_id": mia["child_id"]})
    removed = await browser.post(f"/children/{mia['child_id']}/delete", **EMPTY_FORM)
    assert removed.status_code == 303 and removed.headers["location"] == "/children"
    assert [child["name"] for child in await profiles(browser)] == ["Theo"]
    home = (await browser.get("/")).text
    assert "Tonight, for Mia" not in home and "Tonight, for Theo" in home
    kept = await browser.get(f"/stories/{story['story_id']}", headers=ACCEPT_JSON)
    assert kept.status_code == 200 and kept.json()["child_name"] == "Mia"
    again = await browser.post(f"/children/{mia['child_id']}/delete", **EMPTY_FORM)
    assert again.status_code == 404
    gone = await browser.post(f"/children/{theo['child_id']}/delete",
                              headers={"Content-Type": "application/json"})
    assert gone.status_code == 204 and await profiles(browser) == []


async def test_nothing_changes_from_another_origin(make_app, db):
    async with serve(make_app()) as http:
        mia = await add_child(http, {"name": "Mia"})
        evil = {"Origin": "http://evil.test"}
        for path, form in (("/children", {"name": "Eve"}),
                           (f"/children/{mia['child_id']}", {"name": "Eve"}),
                           (f"/children/{mia['child_id']}/delete", {"csrf_token": ""})):
            assert (await http.post(path, data=form, headers=evil)).status_code == 403
        assert await profiles(http) == [mia]


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
