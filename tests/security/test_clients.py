"""The client behind proxies, the host names, sessions that end on the server, and the
login limits, through the real uvicorn where it matters (issue 10, items 1-3)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from app.security.clients import Clients
from tests.helpers.app import PASSWORD, SAME_ORIGIN, post_story, serve, serve_as, sign_in
from tests.helpers.fake_llm import free_port
from tests.helpers.processes import AppProcess
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


def web_process(database_url, fake_llm, tmp_path, name: str, **env: str) -> AppProcess:
    """The web line through uvicorn, as a platform router in front of it would reach it."""
    app = AppProcess(database_url, fake_llm.url, tmp_path / f"{name}.log")
    app.env |= env
    return app


async def login_as(client: httpx.AsyncClient, forwarded_for: str, password: str) -> int:
    own_origin = str(client.base_url).rstrip("/")
    response = await client.post("/login", data={"password": password},
                                 headers={"Origin": own_origin, "X-Forwarded-For": forwarded_for})
    return response.status_code


@pytest.mark.parametrize("trusted", ["*", None])  # docs/deploying.md, and the default
@pytest.mark.slow
async def test_rotating_left_hand_entries_are_one_client_and_cannot_guess_without_limit(
    database_url, fake_llm, tmp_path, trusted
):
    env = {"HOUSEHOLD_PASSWORD": PASSWORD, "API_TOKEN": "t"}
    if trusted:
        env["FORWARDED_ALLOW_IPS"] = trusted
    app = web_process(database_url, fake_llm, tmp_path, "web", **env)
    try:
        await app.start()
        async with httpx.AsyncClient(base_url=app.url) as client:
            # A stranger at 203.0.113.5 writes a new left-hand entry each time; the router
            # (this test, on loopback) appends the address it really saw.
            codes = [await login_as(client, f"10.0.0.{n}, 203.0.113.5", "wrong")
                     for n in range(12)]
            assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}
            # Even the right password is refused from that address until the window ends.
            assert await login_as(client, "10.9.9.9, 203.0.113.5", PASSWORD) == 429
            # The household, at another address, is not locked out by the stranger.
            assert await login_as(client, "203.0.113.77, 198.51.100.7", PASSWORD) == 303
    finally:
        app.stop()
    log = app.log_path.read_text()
    assert log.count("event=login_failed client=203.0.113.5") == 5
    assert "client=10.0.0." not in log


@pytest.mark.parametrize("trusted", ["*", None])
@pytest.mark.slow
async def test_a_forged_loopback_address_is_a_stranger(database_url, fake_llm, tmp_path, trusted):
    env = {"FORWARDED_ALLOW_IPS": trusted} if trusted else {}
    app = web_process(database_url, fake_llm, tmp_path, "web", **env)
    try:
        await app.start()
        async with httpx.AsyncClient(base_url=app.url) as client:
            assert (await client.get("/")).status_code == 200  # really on this machine
            for headers in ({"X-Forwarded-For": "127.0.0.1"}, {"X-Real-IP": "127.0.0.1"},
                            {"Forwarded": "for=127.0.0.1"}, {"Via": "1.1 proxy"},
                            {"X-Forwarded-For": "127.0.0.1, 127.0.0.1"}):
                page = await client.get("/", headers=headers)
                assert page.status_code == 403, headers
                refused = await client.post("/stories/generate", json={"prompt": "x"},
                                            headers={**headers, "Idempotency-Key": "k"})
                assert refused.json()["error"]["code"] == "password_required", headers
            assert (await client.get("/healthz", headers={"X-Forwarded-For": "1.2.3.4"})
                    ).status_code == 200
    finally:
        app.stop()


def test_the_client_is_the_address_the_nearest_trusted_proxy_saw():
    def client_of(trusted: str, peer: str, *forwarded_for: str, proto: str | None = None):
        scope = {"client": (peer, 1234), "scheme": "http", "headers": [
            (b"x-forwarded-for", value.encode()) for value in forwarded_for
        ] + ([(b"x-forwarded-proto", proto.encode())] if proto else [])}
        Clients(forwarded_allow_ips=trusted).resolve(scope)
        return scope["client"][0], scope["scheme"]

    assert client_of("*", "10.1.1.1", "6.6.6.6, 1.2.3.4") == ("1.2.3.4", "http")
    assert client_of("*", "10.1.1.1", "6.6.6.6", "1.2.3.4:5555") == ("1.2.3.4", "http")
    assert client_of("10.0.0.0/8", "10.1.1.1", "6.6.6.6, 1.2.3.4, 10.2.2.2") == ("1.2.3.4", "http")
    assert client_of("10.0.0.0/8", "10.1.1.1", "10.3.3.3, 10.2.2.2") == ("10.3.3.3", "http")
    assert client_of("127.0.0.1,::1", "9.9.9.9", "127.0.0.1", proto="https") == ("9.9.9.9", "http")
    assert client_of("*", "10.1.1.1", "[2001:db8::1]:80", proto="https") == ("2001:db8::1", "https")
    assert client_of("*", "10.1.1.1", proto="gopher") == ("10.1.1.1", "http")


@pytest.mark.parametrize(("host", "allowed"), [
    ("localhost:8000", True), ("127.0.0.1", True), ("[::1]:8000", True), ("tablet", True),
    ("stories.localhost", True), ("stories.example", True), ("STORIES.EXAMPLE.:443", True),
    ("evil.example", False), ("stories.example.evil.example", False), ("[::1", False), ("", True),
])
def test_dotted_host_names_must_be_listed(host, allowed):
    clients = Clients(forwarded_allow_ips="*", allowed_hosts=("stories.example",))
    assert clients.host_allowed(host) is allowed


@pytest.mark.slow
async def test_allowed_hosts_in_open_mode_refuse_a_rebound_name(make_app, db):
    app = make_app(allow_open=True, allowed_hosts=("stories.example",))
    async with serve_as(app, ("203.0.113.5", 1), base_url="http://evil.example") as http:
        assert (await http.get("/")).status_code == 403
        assert (await post_story(http)).status_code == 403
        assert (await http.get("/healthz")).status_code == 200
    async with serve_as(app, ("203.0.113.5", 1), base_url="https://stories.example") as http:
        assert (await http.get("/")).status_code == 200
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0


async def test_signing_out_ends_the_session_on_the_server(make_app):
    app = make_app(household_password=PASSWORD, api_token="t", allow_open=False)
    async with serve(app) as http:
        await sign_in(http)
        copied = dict(http.cookies)
        assert (await http.get("/")).status_code == 200
        assert (await http.post("/logout", headers=SAME_ORIGIN)).status_code == 303
        http.cookies.clear()
        http.cookies.update(copied)  # the cookie, copied before signing out
        assert (await http.get("/")).status_code == 303
        assert (await http.get("/stories", headers={"Accept": "application/json"})
                ).status_code == 401


@pytest.mark.slow
def test_serve_listens_on_this_computer_only_without_a_password(tmp_path, database_url):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "PORT": str(port)}
    env.pop("HOUSEHOLD_PASSWORD", None)
    env.pop("ALLOW_OPEN", None)
    process = subprocess.Popen([sys.executable, "-m", "app", "serve"], cwd=tmp_path.parent,
                               env={**env, "PYTHONPATH": os.getcwd()},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                assert process.poll() is None
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0]
    assert "event=listening host=127.0.0.1" in output
    assert "this computer only" in output
