"""DATABASE_URL's options reach every connection the app makes: its pool's and its LISTEN
connection's, as libpq would apply them; an option the driver does not know stops start-up
with one line naming DATABASE_URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from app.config import load_settings
from app.config_values import ConfigError
from tests.helpers.app import serve
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio

# What a deployer writes: a name to find the app's connections by, and a session setting
# through libpq's `options`.
OPTIONS = "application_name=bedtime-test&options=-c%20statement_timeout%3D5000"
SETTINGS = ("SELECT current_setting('application_name') AS application_name,"
            " current_setting('statement_timeout') AS statement_timeout")


def with_options(url: str, query: str) -> str:
    parts = urlsplit(url)
    joined = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))


async def test_the_urls_options_reach_the_pool_and_the_listener(make_app, database_url):
    app = make_app(database_url=with_options(database_url, OPTIONS))
    async with serve(app):
        services = app.state.services
        await until(lambda: services.wakeup.listening, "the LISTEN connection")
        pooled = await services.db.fetchrow(SETTINGS)
        assert dict(pooled) == {"application_name": "bedtime-test", "statement_timeout": "5s"}
        # The listener, seen from outside: its name is the URL's.
        watcher = await asyncpg.connect(database_url)
        try:
            listeners = await watcher.fetch(
                "SELECT application_name FROM pg_stat_activity"
                " WHERE datname = current_database() AND query LIKE 'LISTEN%'")
        finally:
            await watcher.close()
        assert [row["application_name"] for row in listeners] == ["bedtime-test"]


async def test_the_listener_connection_carries_the_urls_settings(make_app, database_url):
    app = make_app(database_url=with_options(database_url, OPTIONS))
    async with serve(app):
        wakeup = app.state.services.wakeup
        await until(lambda: wakeup.listening, "the LISTEN connection")
        # A connection made as the wake-up makes the one it listens on, asked from inside.
        connection = await wakeup._connect()
        try:
            row = await connection.fetchrow(SETTINGS)
        finally:
            await connection.close()
    assert dict(row) == {"application_name": "bedtime-test", "statement_timeout": "5s"}


@pytest.mark.parametrize("option", ["applicaton_name=typo", "max_size=5", "statement_timeout=5"])
def test_an_option_the_driver_does_not_know_stops_start_up_naming_database_url(option):
    with pytest.raises(ConfigError, match="^DATABASE_URL") as raised:
        load_settings({"DATABASE_URL": f"postgres://u@h/app?{option}"},
                      env_file="/nonexistent/.env")
    message = str(raised.value)
    assert "\n" not in message and option.split("=")[0] in message
