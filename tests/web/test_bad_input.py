"""Bad input, generated: random bodies, content types, header values, unicode, huge fields and
odd path ids. Whatever arrives, the app never answers 5xx, never shows a traceback, keeps the
contract's error shape for JSON clients, and writes nothing for a request it refuses.

Hypothesis drives a synchronous test; the app runs (lifespan included) in an event loop on a
blocking portal, so every example talks to the same running app over the in-process transport.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.db import Pool
from app.lengths import LENGTHS
from app.requests import FIELDS
from app.stories import parse_id
from app.web.inputs import BODY_MAX_BYTES
from tests.helpers.app import ACCEPT_JSON, JSON, OWN_ORIGIN, new_key, serve
from tests.helpers.campaigns import examples
from tests.helpers.sql import fetch_val

EXAMPLES = examples(200)  # FULL_CAMPAIGNS=1 (make test-all): all 200
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),  # CI replays the same examples; locally they vary
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass
class Running:
    """A served app and the portal its event loop runs on."""

    portal: BlockingPortal
    client: httpx.AsyncClient
    db: Pool

    def request(self, method: str, url: str, **kwargs: object) -> httpx.Response:
        return self.portal.call(lambda: self.client.request(method, url, **kwargs))

    def job_count(self) -> int:
        return self.portal.call(fetch_val, self.db, "SELECT count(*) FROM story_jobs")


SAME_ORIGIN = OWN_ORIGIN  # where the app's own pages post from


@contextmanager
def running(make_app, **overrides: object) -> Iterator[Running]:
    # Room for every example to make a job: a refusal here must come from the input alone.
    app = make_app(queue_max=10_000, daily_story_limit=100_000, **overrides)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
        serve(app)
    ) as client:
        # As the app's own pages send it: these tests are about input, not provenance
        # (the cross-site rule has its own tests), so every request gets that far.
        client.headers["Origin"] = SAME_ORIGIN
        yield Running(portal, client, app.state.services.db)


def assert_sane(response: httpx.Response, *, json_asked: bool) -> None:
    """The properties every answer has, whatever was asked."""
    assert response.status_code < 500, response.text[:500]
    assert b"Traceback" not in response.content
    if json_asked and response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"code", "message"}, body
        assert isinstance(body["error"]["code"], str) and body["error"]["code"]
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def assert_written_only_if_accepted(response: httpx.Response, before: int, after: int) -> None:
    if response.status_code in (202, 303):  # JSON or htmx: 202; a plain form: 303
        assert after - before in (0, 1)
        if response.headers.get("idempotent-replayed") == "true":
            assert after == before
    else:
        assert after == before, response.status_code


# --- strategies -------------------------------------------------------------------------

ODD_STRINGS = [
    "", " ", "\x00", "a\x00b", "\ud800", "\udfff", "\ud83d\ude00", "😀", "مرحبا", "\u202eevil",
    "שלום עולם", "\ufeff", "\u0000\u0001\u001f", "\\", '"', "null", "0", "-1", "1e999",
    "ZALGƠ̸̢͎", "\r\n", "<script>alert(1)</script>", "{{ 7*7 }}", "%s%n", "../../etc/passwd",
]

# Every code point, lone surrogates included (JSON can carry them as "\ud800").
any_char = st.characters(exclude_categories=())
texts = st.one_of(st.text(any_char, max_size=60), st.sampled_from(ODD_STRINGS))
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True), texts,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
field_values = st.one_of(
    json_values,
    st.integers(0, 14),
    st.sampled_from(["short", "medium", "long", "SHORT", " short"]),
    st.text(any_char, min_size=490, max_size=510),
)
story_bodies = st.fixed_dictionaries(
    {},
    optional={
        "prompt": st.one_of(texts, field_values, st.just("a dragon who is afraid of the dark")),
        "child_name": st.one_of(texts, field_values, st.text(max_size=45)),
        "age": field_values,
        "length": field_values,
        "extra": json_values,
        "\ud800": json_values,
    },
)
# Requests that are mostly right, so the accepting path is exercised too.
plausible_text = st.one_of(st.text(min_size=1, max_size=80), texts)
plausible_bodies = st.fixed_dictionaries(
    {"prompt": plausible_text},
    optional={
        "child_name": st.one_of(st.text(max_size=40), texts, st.none()),
        "age": st.one_of(st.integers(0, 13), st.none(), st.just(True), st.just(5.0)),
        "length": st.sampled_from([*LENGTHS, None, "Long"]),
    },
)
new_keys = st.uuids().map(lambda u: u.hex)


def sized_body(total: int) -> bytes:
    """A valid story request of exactly `total` bytes (near and over the limit)."""
    shell = json.dumps({"prompt": ""}).encode()
    return json.dumps({"prompt": "x" * (total - len(shell))}).encode()


def nested(depth: int, inner: str = "1") -> bytes:
    return ("[" * depth + inner + "]" * depth).encode()


json_bodies = st.one_of(
    story_bodies.map(lambda v: json.dumps(v).encode()),
    # Unescaped non-ASCII, lone surrogates written raw: not UTF-8 at all.
    story_bodies.map(
        lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.integers(1, 20_000).map(nested),
    st.integers(1, 5_000).map(lambda d: b'{"prompt": ' + nested(d, '"x"') + b"}"),
    st.integers(BODY_MAX_BYTES - 40, BODY_MAX_BYTES + 40).map(sized_body),
    st.sampled_from([b"", b"{", b"null", b'"\\ud800"', b'{"prompt": "\\ud800"}',
                     b'{"prompt": "ok", "child_name": "\\udfff"}', b'{"\\ud800": 1}',
                     b'{"prompt": "a\\u0000b"}', b"1" * 5000, b'{"prompt": 1' + b"0" * 5000 + b"}",
                     b"\xef\xbb\xbf{}", b"NaN", b'{"prompt":"x","prompt":"y"}']),
)

content_types = st.one_of(
    st.sampled_from([
        "application/json", "application/json; charset=utf-8", "application/json;",
        "application/json; charset=latin-1", "APPLICATION/JSON", "application/json-patch+json",
        "application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=koi8-r",
        "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=x",
        "multipart/form-data; boundary=x; charset=nonsense", "text/plain", "text/html", "",
        "*/*", ";", "application/json\x00",
    ]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
)

printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40)
idempotency_keys = st.one_of(
    st.none(),
    st.uuids().map(lambda u: u.hex),
    st.uuids().map(lambda u: f'"{u.hex}"'),
    printable,
    printable.map(lambda k: f'"{k}"'),
    st.integers(253, 258).map(lambda n: "k" * n),
    st.integers(253, 258).map(lambda n: '"' + "k" * n + '"'),
    st.binary(max_size=300),  # every byte 0x00-0xff: the in-process transport passes them all
    st.sampled_from(["", '"', '""', '"""', " ", "\t", "a\tb", "a b", "~", "\x7f", "é"]),
)

accepts = st.one_of(
    st.none(),
    st.sampled_from([
        "application/json", "text/html", "*/*", "", "image/png", "application/json, text/html",
        "text/html;q=0, application/json", "application/jsonx", "APPLICATION/JSON", "\x00",
    ]),
    st.binary(max_size=40),
)
hx_requests = st.one_of(
    st.none(), st.sampled_from(["true", "false", "TRUE", "1", ""]), st.binary(max_size=10)
)


def header_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", errors="surrogatepass")


def build_headers(**values: str | bytes | None) -> list[tuple[bytes, bytes]]:
    return [
        (name.replace("_", "-").encode(), header_bytes(value))
        for name, value in values.items()
        if value is not None
    ]


def json_was_asked(headers: list[tuple[bytes, bytes]], method: str) -> bool:
    found = dict(headers)
    if method == "GET":
        return b"application/json" in found.get(b"accept", b"")
    content_type = found.get(b"content-type", b"").decode("latin-1")
    return content_type.split(";")[0].strip() == "application/json"


# --- properties ---------------------------------------------------------------------------


@pytest.mark.campaign
@pytest.mark.slow
def test_any_post_body_content_type_and_key_is_answered_sanely(make_app):
    with running(make_app) as app:

        @PROPERTY
        @given(
            body=json_bodies,
            content_type=content_types,
            key=idempotency_keys,
            hx=hx_requests,
            accept=accepts,
        )
        def check(body, content_type, key, hx, accept):
            headers = build_headers(
                content_type=content_type, idempotency_key=key, hx_request=hx, accept=accept
            )
            before = app.job_count()
            response = app.request("POST", "/stories/generate", content=body, headers=headers)
            assert_sane(response, json_asked=json_was_asked(headers, "POST"))
            assert_written_only_if_accepted(response, before, app.job_count())

        check()


@pytest.mark.campaign
def test_any_json_story_request_is_answered_sanely(make_app):
    with running(make_app) as app:

        @PROPERTY
        @given(
            body=st.one_of(plausible_bodies, story_bodies, json_values),
            key=st.one_of(new_keys, idempotency_keys),
        )
        def check(body, key):
            headers = build_headers(content_type="application/json", idempotency_key=key)
            content = json.dumps(body).encode()
            before = app.job_count()
            response = app.request("POST", "/stories/generate", content=content, headers=headers)
            assert_sane(response, json_asked=True)
            after = app.job_count()
            assert_written_only_if_accepted(response, before, after)
            if response.status_code == 202:  # the same again is a replay: no second job
                again = app.request("POST", "/stories/generate", content=content, headers=headers)
                assert again.status_code == 202
                assert again.headers["idempotent-replayed"] == "true"
                assert again.json()["job_id"] == response.json()["job_id"]
                assert app.job_count() == after

        check()


long_digits = st.integers(4290, 4310).map(lambda n: "9" * n)  # int() refuses over 4300
form_values = st.one_of(
    texts, st.integers(-5, 20).map(str), st.text(any_char, max_size=600), long_digits,
    st.sampled_from(["٥", "٠٥", "²", "5_0", "+5", " 7 ", "0" * 30 + "7", "5.0"]),
)
form_fields = st.one_of(
    st.dictionaries(
        st.sampled_from([*FIELDS, "idempotency_key", "csrf_token", "", "\x00", "prompt[]"]),
        form_values,
        max_size=6,
    ),
    plausible_bodies.map(
        lambda body: {name: "" if v is None else str(v) for name, v in body.items()}
    ),
)


def text_bytes(value: str) -> bytes:
    return value.encode("utf-8", errors="surrogatepass")


def urlencoded(fields: dict[str, str]) -> bytes:
    return "&".join(
        f"{quote(text_bytes(name), safe='')}={quote(text_bytes(value), safe='')}"
        for name, value in fields.items()
    ).encode()


def multipart(fields: dict[str, str], as_files: bool) -> tuple[bytes, str]:
    boundary = "bedtime-boundary"
    parts = []
    for name, value in fields.items():
        filename = '; filename="a.txt"' if as_files else ""
        parts.append(
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"{filename}\r\n\r\n"
            .encode("utf-8", errors="surrogatepass")
            + text_bytes(value)
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


@pytest.mark.campaign
def test_any_html_form_post_is_answered_sanely(make_app):
    with running(make_app) as app:

        @PROPERTY
        @given(
            fields=form_fields,
            with_key=st.booleans(),
            encoding=st.sampled_from(["urlencoded", "multipart", "multipart-files"]),
            hx=hx_requests,
            accept=accepts,
        )
        def check(fields, with_key, encoding, hx, accept):
            if with_key:
                fields = {**fields, "idempotency_key": new_key()}
            if encoding == "urlencoded":
                body, content_type = urlencoded(fields), "application/x-www-form-urlencoded"
            else:
                body, content_type = multipart(fields, as_files=encoding == "multipart-files")
            headers = build_headers(content_type=content_type, hx_request=hx, accept=accept)
            before = app.job_count()
            response = app.request("POST", "/stories/generate", content=body, headers=headers)
            assert_sane(response, json_asked=False)
            assert_written_only_if_accepted(response, before, app.job_count())

        check()


path_ids = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from([
        "0", "-1", "1", "01", "+1", " 1", "1 ", "1.0", "1e3", str(2**63 - 1), str(2**63), "..",
        ".", "%2e%2e", "%00", "%ff", "%", "%zz", "%252F", "١٢٣", "²", "①", "৭", "１", "\u0661",
        "9" * 400, "null", "%F0%9F%98%80", "%ED%A0%80", "a%2Fb", "0" * 30 + "1",
    ]),
    long_digits,
    st.text(any_char.filter(lambda c: c not in "/?#"), min_size=1, max_size=30).map(
        lambda s: quote(text_bytes(s), safe="")
    ),
    st.binary(min_size=1, max_size=20).map(lambda b: quote(b, safe="")),
)


PATH_TEMPLATES = ["/stories/jobs/{}", "/stories/{}", "/stories", "/", "/stories/jobs/{}/x",
                  "/{}", "/static/{}", "/stories/{}/markdown", "/stories/jobs/{}/cancel",
                  "/login/{}", "/stories/deleted{}", "/sw.js{}"]
# Every path with what no page expects in it: NUL, non-ASCII, line breaks, encoded or not.
odd_segments = st.one_of(path_ids, st.sampled_from(
    ["%00", "a%00b", "%E2%98%83", "%0D%0Aset-cookie:x", "%FF", "%ED%A0%80", "..%2F..%2Fetc"]))


@pytest.mark.parametrize("mode", ["open", "password"])  # password: signed out
@pytest.mark.campaign
def test_any_path_id_and_page_request_is_answered_sanely(make_app, mode):
    overrides = {"household_password": "pw", "allow_open": False} if mode == "password" else {}
    with running(make_app, **overrides) as app:
        if mode == "open":
            created = app.request(
                "POST", "/stories/generate", json={"prompt": "a moon"},
                headers={**JSON, "Idempotency-Key": new_key()},
            )
            assert created.status_code == 202

        @PROPERTY
        @given(
            template=st.sampled_from(PATH_TEMPLATES),
            raw_id=odd_segments,
            accept=accepts,
            hx=hx_requests,
        )
        def check(template, raw_id, accept, hx):
            headers = build_headers(accept=accept, hx_request=hx)
            before = app.job_count()
            response = app.request("GET", "http://testserver" + template.format(raw_id),
                                   headers=headers)
            assert_sane(response, json_asked=json_was_asked(headers, "GET"))
            for name in ("location", "hx-redirect"):  # a header carries plain ASCII only
                value = response.headers.get(name)
                assert value is None or all("!" <= c <= "~" for c in value), (name, value)
            assert app.job_count() == before

        check()


# --- query strings, cookies and headers, on every route -----------------------------------

ROUTES = [
    ("GET", "/"), ("GET", "/stories"), ("GET", "/stories/1"), ("GET", "/stories/jobs/1"),
    ("GET", "/healthz"), ("GET", "/login"), ("GET", "/static/style.css"), ("GET", "/nowhere"),
    ("POST", "/stories/generate"), ("POST", "/preferences"), ("POST", "/stories/jobs/1/retry"),
    ("POST", "/stories/1/favourite"), ("POST", "/stories/1/delete"), ("POST", "/login"),
    ("POST", "/logout"), ("GET", "/stories/deleted"), ("POST", "/stories/1/restore"),
    ("GET", "/stories/1/markdown"), ("GET", "/stories/backup.zip"), ("GET", "/sw.js"),
    ("GET", "/?like=1"), ("GET", "/?sequel=1"),
]
# Bytes of every kind, percent-encoded: NUL, lone surrogates (as CESU-8 bytes), invalid UTF-8.
raw_texts = st.one_of(
    st.text(max_size=30),
    st.binary(max_size=30),
    st.sampled_from(["\x00", "%00", "\ud800", "a\x00b", "9" * 5000, "-1", "1e999", "NaN"]),
).map(lambda t: quote(t if isinstance(t, bytes) else t.encode("utf-8", "surrogatepass"),
                      safe=""))
query_strings = st.lists(
    st.tuples(st.sampled_from(["q", "next", "page", "text_size", "theme", "x"]), raw_texts),
    max_size=6,  # repeated keys included
).map(lambda pairs: "&".join(f"{k}={v}" for k, v in pairs))
cookie_values = st.one_of(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=";,"),
            max_size=40),
    st.sampled_from(["9" * 5000, "-3", "0", "6", "3.5", "x" * 8000, "\"\"", "dark", "light"]),
)
cookie_headers = st.lists(
    st.tuples(st.sampled_from(["theme", "text_size", "bedtime_session", "other"]), cookie_values),
    max_size=5,
).map(lambda pairs: "; ".join(f"{k}={v}" for k, v in pairs))
header_values = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=60),
    st.sampled_from(["127.0.0.1", "::1, 127.0.0.1", "for=127.0.0.1", "[::1", "1" * 3000]),
)
odd_headers = st.dictionaries(
    st.sampled_from(["X-Forwarded-For", "X-Forwarded-Proto", "Forwarded", "X-Real-IP", "Via",
                     "Authorization", "Referer", "Sec-Fetch-Site", "X-CSRF-Token", "HX-Request",
                     "HX-Target", "Accept-Language", "If-None-Match", "Range"]),
    header_values, max_size=4,
)


@pytest.mark.parametrize("mode", ["open", "password"])
@pytest.mark.campaign
def test_any_query_string_cookie_and_header_on_any_route_is_answered_sanely(make_app, mode):
    overrides = {"household_password": "pw", "api_token": "token", "allow_open": False} \
        if mode == "password" else {}
    with running(make_app, **overrides) as app:
        stories_before = app.portal.call(fetch_val, app.db, "SELECT count(*) FROM stories")

        @PROPERTY
        @given(route=st.sampled_from(ROUTES), query=query_strings, cookies=cookie_headers,
               headers=odd_headers, accept=accepts)
        def check(route, query, cookies, headers, accept):
            method, path = route
            sent = [(name.lower().encode(), value.encode("latin-1"))
                    for name, value in headers.items()]
            if accept is not None:
                sent.append((b"accept", accept if isinstance(accept, bytes) else
                             accept.encode("latin-1")))
            sent.append((b"cookie", cookies.encode()))
            before = app.job_count()
            response = app.request(method, f"http://testserver{path}?{query}", headers=sent)
            assert_sane(response, json_asked=json_was_asked(sent, method) and method == "GET")
            if method == "GET":
                assert app.job_count() == before

        check()
        stories_after = app.portal.call(fetch_val, app.db, "SELECT count(*) FROM stories")
        assert stories_after == stories_before


@pytest.mark.anyio
@pytest.mark.parametrize("query", ["q=%00", "q=%ED%A0%80", "q=%FF%FE", "q=a%00b&q=c"])
async def test_a_library_search_for_odd_text_is_answered(client, query):
    for accept in ("text/html", "application/json"):
        response = await client.get(f"/stories?{query}", headers={"Accept": accept})
        assert response.status_code == 200


@pytest.mark.anyio
async def test_a_text_size_cookie_of_thousands_of_digits_is_ignored(client):
    client.cookies.set("text_size", "9" * 5000)
    for path in ("/", "/stories"):
        assert (await client.get(path)).status_code == 200
    response = await client.post("/preferences", data={"text_size": "larger"},
                                 headers={"Origin": OWN_ORIGIN})
    assert response.status_code < 500


# --- the body limit is enforced while reading -----------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "content_type", ["application/json", "application/x-www-form-urlencoded", "text/plain"]
)
async def test_an_endless_body_is_refused_after_16_kib_without_reading_it_all(
    client, db, content_type
):
    chunk = b"x" * 1024
    sent = 0
    limit_chunks = 10_000  # 10 MiB: reading it all would mean the limit was not enforced

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        while sent < limit_chunks:
            sent += 1
            yield chunk

    response = await client.post(
        "/stories/generate",
        content=endless(),
        headers={"Content-Type": content_type, "Idempotency-Key": new_key(),
                 "Accept": "application/json", "Origin": SAME_ORIGIN},
    )
    assert "content-length" not in response.request.headers  # chunked, size unknown up front
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert sent <= BODY_MAX_BYTES // len(chunk) + 2
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


@pytest.mark.anyio
async def test_a_declared_length_over_the_limit_is_refused_before_reading(client, db):
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        sent += 1
        yield b"{}"

    response = await client.post(
        "/stories/generate",
        content=body(),
        headers={**JSON, "Idempotency-Key": new_key(),
                 "Content-Length": str(BODY_MAX_BYTES + 1)},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert sent == 0
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


# --- what the properties found, pinned ----------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        b'{"prompt": "\\ud800"}',  # a lone surrogate, escaped: valid JSON syntax, not text
        b'{"prompt": "a moon", "child_name": "Mi\\udfffa"}',
        b'{"\\ud800": 1}',  # the error message would have named this field
        b'{"prompt": ["\\ud83d"]}',
        b"[" * 5000 + b"]" * 5000,  # too deep to decode
        b'{"prompt": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    ],
)
@pytest.mark.slow
async def test_json_that_is_not_unicode_text_or_too_deep_is_malformed(client, db, body):
    response = await client.post(
        "/stories/generate", content=body, headers={**JSON, "Idempotency-Key": new_key()}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_form_with_a_file_part_is_refused_and_leaves_no_open_file(client, db):
    response = await client.post(
        "/stories/generate",
        data={"idempotency_key": new_key()},
        files={"prompt": ("idea.txt", b"a moon")},
        headers={"Accept": "application/json", "Origin": SAME_ORIGIN},
    )
    gc.collect()  # an unclosed spooled file would warn here (and fail: filterwarnings=error)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_form"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["/stories/jobs/", "/stories/"])
async def test_an_id_with_thousands_of_digits_is_not_found(client, path):
    response = await client.get(path + "9" * 5000, headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.anyio
async def test_an_id_with_leading_zeros_still_finds_the_job(client):
    job_id = (await client.post(
        "/stories/generate", json={"prompt": "a moon"},
        headers={**JSON, "Idempotency-Key": new_key()},
    )).json()["job_id"]
    response = await client.get(
        f"/stories/jobs/{job_id:030d}", headers={"Accept": "application/json"}
    )
    assert response.status_code == 200 and response.json()["job_id"] == job_id


@pytest.mark.anyio
async def test_a_form_age_with_thousands_of_digits_is_a_field_error(client, db):
    response = await client.post(
        "/stories/generate",
        data={"prompt": "a moon", "age": "9" * 5000, "idempotency_key": new_key()},
        headers={"Origin": SAME_ORIGIN},
    )
    assert response.status_code == 422
    assert "The age is a number from 1 to 12, or leave it empty." in response.text
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


@pytest.mark.anyio
@pytest.mark.parametrize("number", ["9223372036854775808", "99999999999999999999", "0",
                                    "00009223372036854775807"])
@pytest.mark.slow
async def test_an_id_past_bigint_is_not_found_and_never_a_500(client, number):
    """One id parser for paths, queries and forms: past bigint is nothing, not an error."""
    assert (await client.get(f"/stories/{number}")).status_code == 404
    assert (await client.get(f"/stories/jobs/{number}", headers=ACCEPT_JSON)).status_code == 404
    library = await client.get(f"/stories?deleted={number}")
    assert library.status_code == 200 and "Undo" not in library.text


def test_the_id_parser_takes_bigint_and_nothing_beyond():
    assert parse_id("9223372036854775807") == 2**63 - 1
    assert parse_id("0017") == 17
    for raw in ("9223372036854775808", "0", "", "-1", "1.0", "١٢", "9" * 5000):
        assert parse_id(raw) is None, raw


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["/stories/jobs/1/finish", "/stories/1/picture",
                                  "/stories/1/narration"])
async def test_every_paid_post_refuses_a_body_that_is_not_json(client, db, path):
    """A post that starts a paid job reads its key the one way (app/web/inputs.py's
    posted_key): over the JSON API a body that is not JSON is refused as such, whatever
    the path, before anything is looked up or made."""
    response = await client.post(path, content=b'{"oops',
                                 headers={**JSON, "Idempotency-Key": new_key()})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0
