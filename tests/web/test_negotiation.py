"""The one rule that picks JSON or HTML (app/web/negotiation.py), for every route, its
errors and the middleware's refusals: a page answers HTML unless JSON is named, an API
resource (/children, /healthz) JSON unless HTML is named."""

from __future__ import annotations

import httpx
import pytest
from starlette.requests import Request

from app.web.negotiation import answers_json, error_as_json
from tests.helpers.app import ACCEPT_JSON

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
FORM = "application/x-www-form-urlencoded"


def request(method: str, path: str, **headers: str) -> Request:
    sent = [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return Request({"type": "http", "method": method, "path": path, "headers": sent,
                    "query_string": b""})


@pytest.mark.parametrize(("method", "path", "headers", "json"), [
    # Pages: HTML unless JSON is named (curl's */* gets the page).
    ("GET", "/stories", {"accept": "*/*"}, False),
    ("GET", "/stories", {}, False),
    ("GET", "/stories", {"accept": BROWSER}, False),
    ("GET", "/stories", {"accept": "application/json"}, True),
    ("HEAD", "/stories/7", {"accept": "application/json"}, True),
    ("GET", "/stories/jobs/7", {"accept": "text/html, application/json"}, True),
    ("GET", "/stories/jobs/7", {"accept": "Application/JSON"}, True),  # any case
    ("POST", "/stories/generate", {"content_type": "application/json"}, True),
    ("POST", "/stories/generate", {"content_type": "application/json; charset=utf-8"}, True),
    ("POST", "/stories/generate", {"content_type": FORM}, False),
    ("POST", "/stories/generate", {}, False),
    ("POST", "/stories/generate", {"accept": "application/json", "content_type": FORM}, False),
    # API resources: JSON unless HTML is named (curl's */* gets JSON).
    ("GET", "/children", {"accept": "*/*"}, True),
    ("GET", "/children", {}, True),
    ("GET", "/children", {"accept": "application/json"}, True),
    ("GET", "/children", {"accept": BROWSER}, False),
    ("GET", "/children", {"accept": "text/html, application/json"}, False),
    ("POST", "/children", {}, True),
    ("POST", "/children", {"content_type": "application/json"}, True),
    ("POST", "/children", {"content_type": FORM}, False),
    ("POST", "/children/3", {"content_type": "multipart/form-data; boundary=x"}, False),
    ("POST", "/children/3/delete", {"content_type": "Application/X-WWW-Form-Urlencoded"}, False),
    ("GET", "/healthz", {"accept": "*/*"}, True),
    # Not an API resource for sharing its first letters.
    ("GET", "/childrens-corner", {"accept": "*/*"}, False),
])
def test_the_rule_picks_each_answer(method, path, headers, json):
    assert answers_json(request(method, path, **headers)) is json


@pytest.mark.parametrize(("method", "path", "headers", "json"), [
    ("GET", "/stories/7", {"accept": BROWSER}, False),
    ("GET", "/stories/7", {"accept": "*/*"}, False),
    ("GET", "/stories/7", {}, False),
    ("GET", "/stories/7", {"accept": "application/json"}, True),
    ("GET", "/stories/7", {"accept": "image/png"}, True),  # takes no HTML: a page is no use
    ("GET", "/nowhere", {"accept": "text/plain"}, True),
    ("POST", "/stories/generate", {"content_type": "application/json"}, True),
    ("POST", "/stories/generate", {"content_type": FORM, "accept": BROWSER}, False),
    ("GET", "/children", {"accept": "*/*"}, True),
    ("POST", "/children/3/delete", {}, True),
    ("POST", "/children", {"content_type": FORM, "accept": BROWSER}, False),
])
def test_an_error_goes_by_the_same_rule(method, path, headers, json):
    assert error_as_json(request(method, path, **headers)) is json


def is_json(response: httpx.Response) -> bool:
    return response.headers["content-type"].startswith("application/json")


@pytest.mark.anyio
async def test_curl_gets_json_from_the_profiles_and_the_library_page(client):
    curl = {"Accept": "*/*"}
    assert is_json(await client.get("/children", headers=curl))
    library = await client.get("/stories", headers=curl)
    assert library.headers["content-type"].startswith("text/html")
    assert is_json(await client.get("/stories", headers=ACCEPT_JSON))


@pytest.mark.anyio
async def test_an_error_at_an_api_resource_is_json_for_curl(client):
    """curl -X POST with no body names no form: its refusal is JSON, in the contract's
    shape, and so is a 404 for a JSON body."""
    missing = await client.post("/children/999/delete", headers={"Accept": "*/*"})
    assert missing.status_code == 403  # no provenance and no JSON body: the cross-site rule
    assert missing.json()["error"]["code"] == "forbidden"
    gone = await client.post("/children/999", json={"name": "Mia"}, headers={"Accept": "*/*"})
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "not_found"


@pytest.mark.anyio
async def test_an_error_at_a_page_is_a_page_for_a_browser_and_json_when_asked(client):
    page = await client.get("/stories/999", headers={"Accept": BROWSER})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    asked = await client.get("/stories/999", headers=ACCEPT_JSON)
    assert asked.status_code == 404
    assert asked.json()["error"]["code"] == "not_found"


@pytest.mark.anyio
async def test_a_stranger_asking_for_the_profiles_is_refused_in_json(make_app):
    """The middleware's refusal goes by the rule too: /children answers JSON to curl."""
    app = make_app(allow_open=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            refused = await http.get("/children", headers={"Accept": "*/*"})
            assert refused.status_code == 403
            assert refused.json()["error"]["code"] == "password_required"
            page = await http.get("/stories", headers={"Accept": "*/*"})
            assert page.status_code == 403
            assert page.headers["content-type"].startswith("text/html")
