"""The story form in a family's hands (issue 29, items 8 and 10): it says whom the story is
for (a chooser a one-tap story leaves alone; a sequel keeps its children), counts its idea
and never cuts it, speaks a family's words, starts a sequel in the language chosen, and
keeps every name and idea a family typed isolated for direction."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from tests.helpers.app import ACCEPT_JSON, JSON, new_key, post_story, wait_for_job
from tests.helpers.sql import fetch_one

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

MIA = {"name": "Mia", "age": 5, "language": "en"}
LEO = {"name": "Leo", "age": 7, "language": "es"}
NOA = "נועה"  # Noa, in Hebrew: a right-to-left name
KEY = re.compile(r'id="story-form".*?name="idempotency_key" value="([^"]+)"', re.S)


async def add_child(client, body: dict) -> int:
    response = await client.post("/children", json=body)
    assert response.status_code == 201, response.text
    return response.json()["child_id"]


async def finished(client, response) -> dict:
    """The job a form or JSON post made, once written: its row's request as the API tells."""
    if response.headers.get("content-type", "").startswith("application/json"):
        job_id = response.json()["job_id"]
    else:
        assert response.status_code == 303, response.text
        job_id = int(response.headers["location"].rsplit("/", 1)[1])
    job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    return (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()


def form_of(page: str) -> dict[str, str]:
    """What a tap on "Write the story" sends, as the page filled the form in."""
    form = re.search(r'<form id="story-form".*?</form>', page, re.S).group()
    fields = {"idempotency_key": KEY.search(page).group(1)}
    fields["prompt"] = html.unescape(
        re.search(r'<textarea id="prompt"[^>]*>(.*?)</textarea>', form, re.S).group(1))
    for name in ("child_name", "age", "sequel_of"):
        match = re.search(rf'name="{name}"[^>]*value="([^"]*)"', form)
        if match:
            fields[name] = html.unescape(match.group(1))
    chosen = re.search(r'name="for" value="([^"]+)"(?: checked|[^>]*type="hidden")', form)
    if chosen is None:
        chosen = re.search(r'type="radio" name="for" value="([^"]+)" checked', form)
    if chosen is None:
        chosen = re.search(r'type="hidden" name="for" value="([^"]+)"', form)
    if chosen:
        fields["for"] = chosen.group(1)
    fields["length"] = re.search(r'name="length" value="(\w+)" checked', form).group(1)
    fields["language"] = re.search(r'<option value="(\w+)" lang="\w+" selected>', form).group(1)
    return fields


def chosen_for(page: str) -> str | None:
    match = re.search(r'type="radio" name="for" value="([^"]+)" checked', page)
    return match.group(1) if match else None


async def one_tap(client, page: str, child_id: int) -> dict:
    """The home page's one-tap button for a child, tapped."""
    button = re.search(
        rf'<form method="post" action="/stories/generate" data-spends="stories">\s*'
        rf'<input type="hidden" name="idempotency_key" value="([^"]+)">.*?'
        rf'name="prompt" value="([^"]+)">\s*<input type="hidden" name="child_id" '
        rf'value="{child_id}">\s*<button', page, re.S)
    return await finished(client, await client.post("/stories/generate", data={
        "idempotency_key": button.group(1), "prompt": html.unescape(button.group(2)),
        "child_id": str(child_id)}))


# -- whom the story is for ------------------------------------------------------------------


@pytest.mark.slow
async def test_a_typed_idea_after_a_one_tap_story_goes_out_for_the_child_the_form_shows(
    client, fake_llm
):
    mia, leo = await add_child(client, MIA), await add_child(client, LEO)
    home = (await client.get("/")).text
    assert "Who is it for?" in home
    # Mia, chosen in the form, for a typed idea.
    story = await finished(client, await client.post("/stories/generate", data=form_of(home) | {
        "prompt": "a quiet pond", "for": str(mia)}))
    assert story["child_name"] == "Mia" and story["age"] == 5
    # Then Leo's one-tap story: it is Leo's ...
    home = (await client.get("/")).text
    assert chosen_for(home) == str(mia)
    assert (await one_tap(client, home, leo))["child_name"] == "Leo"
    # ... and the form still says Mia, so the next typed idea is hers.
    home = (await client.get("/")).text
    assert chosen_for(home) == str(mia)
    story = await finished(client, await client.post(
        "/stories/generate", data=form_of(home) | {"prompt": "a kite that naps"}))
    assert (story["child_name"], story["age"], story["prompt"]) == ("Mia", 5, "a kite that naps")


async def test_the_first_one_tap_story_does_not_change_whom_the_form_is_for(client, fake_llm):
    await add_child(client, MIA)
    leo = await add_child(client, LEO)
    home = (await client.get("/")).text
    assert chosen_for(home) == "other"  # nothing asked yet: someone else, nobody named
    await one_tap(client, home, leo)
    home = (await client.get("/")).text
    assert chosen_for(home) == "other"
    story = await finished(client, await client.post(
        "/stories/generate", data=form_of(home) | {"prompt": "a snail's picnic"}))
    assert story["child_name"] is None


async def test_someone_else_takes_the_name_boxes_and_a_profile_leaves_them_out(client, fake_llm):
    mia = await add_child(client, MIA)
    home = (await client.get("/")).text
    fields = form_of(home) | {"prompt": "a moth", "child_name": "Sam", "age": "4"}
    story = await finished(client, await client.post(
        "/stories/generate", data=fields | {"for": "other"}))
    assert (story["child_name"], story["age"]) == ("Sam", 4)
    # The boxes still hold Sam, but Mia is chosen: the story is hers.
    home = (await client.get("/")).text
    assert chosen_for(home) == "other" and 'value="Sam"' in home  # remembered as it was
    story = await finished(client, await client.post("/stories/generate", data=form_of(home) | {
        "prompt": "a moth", "child_name": "Sam", "age": "4", "for": str(mia)}))
    assert (story["child_name"], story["age"]) == ("Mia", 5)


async def test_a_profile_removed_since_the_page_was_made_is_said_beside_the_chooser(
    client, db
):
    mia = await add_child(client, MIA)
    home = (await client.get("/")).text
    await client.post(f"/children/{mia}/delete")
    response = await client.post("/stories/generate", data=form_of(home) | {
        "prompt": "a moth", "for": str(mia)})
    assert response.status_code == 422
    assert 'id="for-error">That child&#39;s profile was removed' in response.text
    assert (await fetch_one(db, "SELECT count(*) AS n FROM story_jobs"))["n"] == 0


@pytest.mark.slow
async def test_a_sequel_keeps_both_its_children(client, fake_llm, db):
    mia, leo = await add_child(client, MIA), await add_child(client, LEO)
    first = await finished(client, await post_story(
        client, {"prompt": "two owls", "child_id": mia, "sibling_id": leo}))
    page = (await client.get(f"/?sequel={first['story_id']}")).text
    assert chosen_for(page) == "earlier"
    assert "<bdi>Mia</bdi> and <bdi>Leo</bdi>, as before" in page
    response = await client.post("/stories/generate", data=form_of(page))
    sequel = await finished(client, response)
    row = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": sequel["job_id"]})
    assert row["sequel_of"] == first["story_id"]
    assert (row["child_name"], row["age"], row["sibling_name"], row["sibling_age"]) == (
        "Mia", 5, "Leo", 7)


# -- the idea: a counter, no silent cut, a family's words -------------------------------------


@pytest.mark.slow
async def test_a_long_idea_is_counted_never_cut_and_refused_kindly(client, db):
    home = (await client.get("/")).text
    textarea = re.search(r'<textarea id="prompt"[^>]*>', home).group()
    assert "maxlength" not in textarea and 'data-max-chars="500"' in textarea
    assert 'id="prompt-count" data-char-count>0 of 500 characters' in home
    pasted = "a dragon who hums " * 34  # 612 characters, 611 once trimmed
    response = await client.post("/stories/generate", data=form_of(home) | {"prompt": pasted})
    assert response.status_code == 422
    error = re.search(r'id="prompt-error">([^<]+)<', response.text).group(1)
    assert error == ("That idea is 611 characters long, and a story&#39;s idea can be 500 at "
                     "most. Please make it 111 shorter.")
    assert html.escape(pasted, quote=False) in response.text  # all of it kept, nothing cut
    assert 'class="char-count over"' in response.text
    # The JSON API: the same refusal, its code, and a message that names the field.
    answer = await client.post("/stories/generate", json={"prompt": pasted},
                               headers={**JSON, "Idempotency-Key": new_key()})
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "invalid_request"
    assert "prompt" in answer.json()["error"]["message"]
    assert (await fetch_one(db, "SELECT count(*) AS n FROM story_jobs"))["n"] == 0


@pytest.mark.slow
async def test_an_idea_of_500_characters_with_line_breaks_fits(client, fake_llm):
    home = (await client.get("/")).text
    idea = ("a fox\r\n" + "z" * 488 + "\r\nhome")  # 500 once a line break is one character
    story = await finished(client, await client.post(
        "/stories/generate", data=form_of(home) | {"prompt": idea}))
    assert story["prompt"] == idea.replace("\r\n", "\n")


async def test_field_messages_are_in_a_familys_words(client):
    home = (await client.get("/")).text
    for fields, field, said in (
        ({"prompt": "  "}, "prompt",
         "Please write a few words about what the story should be about."),
        ({"age": "13", "for": "other"}, "age",
         "The age is a number from 1 to 12, or leave it empty."),
        ({"child_name": "n" * 41, "for": "other"}, "child_name",
         "A name can be 40 letters at most. Perhaps a shorter one, or a nickname?"),
    ):
        response = await client.post("/stories/generate", data=form_of(home) | {
            "prompt": "a moon"} | fields)
        assert response.status_code == 422
        assert f'id="{field}-error">{html.escape(said)}</p>' in response.text
        assert "is required" not in response.text and "must be" not in response.text


# -- a sequel opens at its note, in the language chosen ---------------------------------------


@pytest.mark.slow
async def test_a_sequel_opens_at_its_note_and_starts_in_the_language_chosen(client, fake_llm, db):
    first = await finished(client, await post_story(client, {"prompt": "an owl"}))
    title = first["title"]
    story_page = (await client.get(f"/stories/{first['story_id']}")).text
    assert f'href="/?sequel={first["story_id"]}#story-form"' in story_page
    assert f'href="/?like={first["story_id"]}#story-form"' in story_page
    page = (await client.get(f"/?sequel={first['story_id']}")).text
    assert form_of(page)["prompt"] == f"what happens next in “{title}”"
    assert f'data-next-prompt-fr="la suite de « {html.escape(title)} »"' in page
    # Français chosen, the first prompt untouched: the sequel is asked for in French.
    sequel = await finished(client, await client.post(
        "/stories/generate", data=form_of(page) | {"language": "fr"}))
    assert sequel["prompt"] == f"la suite de « {title} »"
    assert sequel["language"] == "fr"
    # A prompt the family wrote is kept as written.
    mine = await finished(client, await client.post("/stories/generate", data=form_of(
        (await client.get(f"/?sequel={first['story_id']}")).text) | {
        "language": "fr", "prompt": "the owl flies home"}))
    assert mine["prompt"] == "the owl flies home"


@pytest.mark.slow
async def test_a_french_story_s_sequel_starts_in_french(client, fake_llm):
    first = await finished(client, await post_story(client, {"prompt": "un hibou",
                                                             "language": "fr"}))
    page = (await client.get(f"/?sequel={first['story_id']}")).text
    assert form_of(page)["prompt"] == f"la suite de « {first['title']} »"


# -- right-to-left names stay in place ---------------------------------------------------------


class Isolation(HTMLParser):
    """Every text node holding `needle`, and whether it sits in a <bdi> or a dir="auto"
    element: the page's <title> aside (it can hold no markup), and the story's own text
    (the storyteller's words, which may repeat a name: it carries its language)."""

    VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle = needle
        self.open: list[tuple[str, bool, bool]] = []  # tag, isolated, the story's text
        self.found: list[tuple[bool, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        named = dict(attrs)
        self.open.append((tag, tag == "bdi" or named.get("dir") == "auto",
                          "story-text" in (named.get("class") or "").split()))

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.needle not in data or any(tag == "title" or told for tag, _, told in self.open):
            return
        self.found.append((any(isolated for _, isolated, _ in self.open), data.strip()))


@pytest.mark.slow
async def test_every_name_and_idea_a_family_typed_is_isolated_for_direction(client, fake_llm):
    noa = await add_child(client, {"name": NOA, "age": 5, "likes": f"{NOA}'s kites"})
    leo = await add_child(client, LEO)
    mine = await finished(client, await post_story(client, {"prompt": f"{NOA} and the moon",
                                                            "child_id": noa}))
    both = await finished(client, await post_story(client, {"prompt": "two kites",
                                                            "child_id": noa, "sibling_id": leo}))
    doomed = await finished(client, await post_story(client, {"prompt": f"{NOA}'s boat",
                                                              "child_name": NOA}))
    await client.post(f"/stories/{doomed['story_id']}/delete")
    pages = {
        "home": "/", "sequel": f"/?sequel={both['story_id']}", "like": f"/?like={mine['story_id']}",
        "library": "/stories", "story": f"/stories/{mine['story_id']}",
        "siblings": f"/stories/{both['story_id']}", "job": f"/stories/jobs/{mine['job_id']}",
        "children": "/children", "deleted": "/stories/deleted",
    }
    for name, path in pages.items():
        response = await client.get(path, headers={"Accept": "text/html"})
        assert response.status_code == 200, name
        parser = Isolation(NOA)
        parser.feed(response.text)
        assert parser.found, name
        assert [text for isolated, text in parser.found if not isolated] == [], name
    library = (await client.get("/stories")).text
    assert f"for <bdi>{NOA}</bdi>, 5" in library
    story = (await client.get(f"/stories/{mine['story_id']}")).text
    assert f"For <bdi>{NOA}</bdi>, age 5" in story
