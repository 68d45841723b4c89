"""Configuration: every contract variable parsed, every bad value stops start-up with one
line naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import load_settings
from app.config_values import ConfigError
from app.storytelling.limits import REASONING_ALLOWANCE_TOKENS

ROOT = Path(__file__).resolve().parent.parent


def settings_from(**env: str):
    return load_settings(env, env_file="/nonexistent/.env")


def test_defaults_pick_the_demo_storyteller_and_the_embedded_database():
    settings = settings_from()
    assert settings.storyteller == "demo"
    assert settings.database_url is None
    assert (settings.queue_max, settings.llm_timeout_s, settings.daily_story_limit) == (8, 180, 20)
    assert (settings.sweeper_interval_s, settings.sweeper_threshold_min) == (300, 8)
    assert settings.shutdown_grace_s == 25 and settings.port == 8000 and settings.timezone == "UTC"
    assert settings.worker_concurrency == 1


def test_worker_concurrency_zero_means_serve_only():
    assert settings_from(WORKER_CONCURRENCY="0").worker_concurrency == 0
    assert settings_from(WORKER_CONCURRENCY="4").worker_concurrency == 4


@pytest.mark.parametrize(("interval", "stale"), [("5", "14"), ("20", "59"), ("1", "2.9")])
def test_a_heartbeat_that_could_go_stale_while_alive_is_refused(interval, stale):
    with pytest.raises(ConfigError, match="HEARTBEAT_STALE_S must be at least 3x"):
        settings_from(HEARTBEAT_INTERVAL_S=interval, HEARTBEAT_STALE_S=stale)
    assert settings_from(HEARTBEAT_INTERVAL_S=interval,
                         HEARTBEAT_STALE_S=str(3 * float(interval))).heartbeat_stale_s > 0


def test_an_api_key_selects_the_openai_storyteller():
    assert settings_from(OPENAI_API_KEY="sk-test").storyteller == "openai"
    assert settings_from(OPENAI_API_KEY="sk-test", STORYTELLER="demo").storyteller == "demo"


def test_llm_api_auto_is_background_mode_for_openai_itself_and_chat_elsewhere():
    assert settings_from(OPENAI_API_KEY="k").llm_api == "responses"
    assert settings_from(OPENAI_API_KEY="k", OPENAI_BASE_URL="http://localhost:11434/v1"
                         ).llm_api == "chat"
    assert settings_from(OPENAI_API_KEY="k", OPENAI_BASE_URL="http://vllm:8000/v1",
                         LLM_API="responses").llm_api == "responses"
    assert settings_from(OPENAI_API_KEY="k", LLM_API="CHAT").llm_api == "chat"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://u:p@db.example:5432/app", "postgresql://u:p@db.example:5432/app"),
        ("postgres://u:p@h/app?sslmode=require", "postgresql://u:p@h/app?sslmode=require"),
        ("postgresql://u@h/app?sslmode=disable&application_name=a",
         "postgresql://u@h/app?sslmode=disable&application_name=a"),
    ],
)
def test_paas_database_urls_work_as_given(url, expected):
    assert settings_from(DATABASE_URL=url).database_url == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("QUEUE_MAX", "0"),
        ("QUEUE_MAX", "many"),
        ("WORKER_CONCURRENCY", "-1"),
        ("WORKER_CONCURRENCY", "lots"),
        ("LLM_TIMEOUT_S", "-1"),
        ("LLM_TIMEOUT_S", "nan"),
        ("SWEEPER_INTERVAL_S", "-5"),
        ("SWEEPER_THRESHOLD_MIN", "soon"),
        ("SHUTDOWN_GRACE_S", "-1"),
        ("DAILY_STORY_LIMIT", "0"),
        ("PORT", "70000"),
        ("DATABASE_URL", "mysql://u@h/db"),
        ("DATABASE_URL", "postgres://u@h:notaport/db"),
        ("OPENAI_BASE_URL", "localhost:11434"),
        ("STORYTELLER", "gpt"),
        ("LLM_API", "completions"),
        ("ALLOW_OPEN", "maybe"),
        ("MODERATION", "yes please"),
        ("TZ", "Mars/Olympus_Mons"),
        ("STORY_TEMPERATURE", "warm"),
        ("STORY_TEMPERATURE", "2.5"),
        ("STORY_TEMPERATURE", "-0.1"),
        ("STORY_REASONING_TOKENS", "lots"),
        ("STORY_REASONING_TOKENS", "-1"),
        ("STORY_REASONING_TOKENS", "1.5"),
        ("SHARE_DAYS", "0"),
        ("SHARE_DAYS", "a month"),
        ("MONTHLY_BUDGET", "five"),
        ("MONTHLY_BUDGET", "-1"),
        ("MONTHLY_BUDGET", "nan"),
        ("PRICES", "{not json"),
        ("PRICES", "[1, 2]"),
        ("PRICES", '{"m": {"input_per_mtok": -0.1}}'),
        ("PRICES", '{"m": {"output_per_mtok": "cheap"}}'),
        ("PRICES", '{"m": {"per_picture": 0.01}}'),
        ("PRICES", '{"m": 0.15}'),
        ("PRICES", '{"m": {"per_image": 1e20}}'),  # overflowed the ledger's bigint
        ("PRICES", '{"m": {"input_per_mtok": 1e300}}'),  # 500s on intake and the home page
        ("PRICES", '{"m": {"output_per_mtok": 1000.01}}'),
        ("PRICES", '{"m": {"output_per_mtok": Infinity}}'),
        ("PRICES", '{"m": {"cached_per_mtok": NaN}}'),
    ],
)
def test_a_bad_value_names_its_variable(name, value):
    with pytest.raises(ConfigError, match=name):
        settings_from(**{name: value})


def test_prices_up_to_a_thousand_dollars_are_taken():
    prices = settings_from(PRICES='{"m": {"input_per_mtok": 1000, "per_image": 0}}').prices
    assert prices["m"].input_per_mtok == 1000 and prices["m"].per_image == 0


def test_story_temperature_is_unset_unless_given():
    assert settings_from().story_temperature is None
    assert settings_from(STORY_TEMPERATURE="0.8").story_temperature == 0.8


def test_story_reasoning_tokens_is_none_with_a_server_of_one_s_own_else_room_to_reason():
    assert settings_from(OPENAI_API_KEY="sk").reasoning_tokens == REASONING_ALLOWANCE_TOKENS
    local = settings_from(OPENAI_API_KEY="sk", OPENAI_BASE_URL="http://127.0.0.1:8080/v1")
    assert local.reasoning_tokens == 0
    assert settings_from(STORY_REASONING_TOKENS="512").reasoning_tokens == 512
    assert settings_from(OPENAI_API_KEY="sk", OPENAI_BASE_URL="http://h/v1",
                         STORY_REASONING_TOKENS="2000").reasoning_tokens == 2000


def test_openai_storyteller_without_a_key_is_refused():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        settings_from(STORYTELLER="openai")


def test_a_dotenv_file_is_read(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("QUEUE_MAX=3\nSTORY_MODEL=tiny\n")
    settings = load_settings({}, env_file=str(env_file))
    assert (settings.queue_max, settings.story_model) == (3, "tiny")


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "uvicorn", "app.main:app", "--port", "0"],
        [sys.executable, "-m", "app", "migrate"],
        [sys.executable, "-m", "app", "serve"],
        [sys.executable, "-m", "app", "worker"],
    ],
)
@pytest.mark.slow
def test_bad_config_stops_start_up_with_one_line(command, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "DATABASE"))}
    env |= {"QUEUE_MAX": "0", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    output = (result.stdout + result.stderr).strip()
    assert "Traceback" not in output
    assert output.splitlines() == [output.splitlines()[-1]], output
    assert "QUEUE_MAX" in output


@pytest.mark.slow
def test_the_openai_library_and_jinja2_are_not_imported_before_the_app_serves(tmp_path):
    """The openai library (most of a second to import) and Jinja2 (a tenth of start-up)
    wait until the app serves: the app's module, which uvicorn imports before anything is
    served, loads neither (the lifespan warms both in threads once it serves)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "DATABASE"))}
    env |= {"OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(ROOT)}
    script = ("import sys, app.main; app.main.app; "  # built, as uvicorn builds it
              "print(sorted(m for m in sys.modules if m in ('openai', 'jinja2')))")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_importing_the_app_module_reads_no_settings_until_uvicorn_asks_for_the_app(tmp_path):
    """Tests and tools import app.main freely: the settings (and the developer's .env) are
    read only when `app.main:app` is asked for, as uvicorn does."""
    (tmp_path / ".env").write_text("QUEUE_MAX=0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "DATABASE"))}
    env |= {"PYTHONPATH": str(ROOT)}
    imported = subprocess.run([sys.executable, "-c", "import app.main; print('imported')"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert (imported.returncode, imported.stdout.strip()) == (0, "imported"), imported.stderr
    asked = subprocess.run([sys.executable, "-c", "import app.main; app.main.app"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert asked.returncode == 2 and "QUEUE_MAX" in asked.stderr
    assert "Traceback" not in asked.stderr


def test_scheduled_backups_are_off_until_a_folder_is_named_then_daily_keeping_14():
    assert settings_from().backup_dir is None
    settings = settings_from(BACKUP_DIR="/var/backups/stories")
    assert settings.backup_dir == Path("/var/backups/stories")
    assert (settings.backup_every_h, settings.backup_keep) == (24, 14)
    trial = settings_from(BACKUP_DIR="/tmp/b", BACKUP_EVERY_H="0.01", BACKUP_KEEP="1")
    assert (trial.backup_every_h, trial.backup_keep) == (0.01, 1)


def test_a_backup_folder_that_is_not_there_does_not_stop_start_up(tmp_path):
    # Not a folder, or not writable: a runtime failure the home page shows, not bad config.
    assert settings_from(BACKUP_DIR=str(tmp_path / "missing")).backup_dir == tmp_path / "missing"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BACKUP_EVERY_H", "0"),
        ("BACKUP_EVERY_H", "-1"),
        ("BACKUP_EVERY_H", "daily"),
        ("BACKUP_EVERY_H", "nan"),
        ("BACKUP_KEEP", "0"),
        ("BACKUP_KEEP", "2.5"),
        ("BACKUP_KEEP", "all"),
    ],
)
def test_a_bad_backup_setting_names_its_variable(name, value):
    with pytest.raises(ConfigError, match=name):
        settings_from(BACKUP_DIR="/tmp/b", **{name: value})


@pytest.mark.parametrize(("environ", "illustrator"), [
    ({}, "demo"),  # the demo storyteller draws its own
    ({"OPENAI_API_KEY": "k"}, "openai"),  # OpenAI itself has the Images API
    ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://localhost:11434/v1"}, "off"),
    ({"OPENAI_API_KEY": "k", "ILLUSTRATOR": "demo"}, "demo"),
    ({"ILLUSTRATOR": "off"}, "off"),
])
def test_illustrator_auto_follows_the_storyteller(environ, illustrator):
    assert load_settings(environ, env_file="/nonexistent").illustrator == illustrator


@pytest.mark.parametrize(("environ", "named"), [
    ({"ILLUSTRATOR": "crayons"}, "ILLUSTRATOR"),
    ({"ILLUSTRATOR": "openai"}, "ILLUSTRATOR=openai needs OPENAI_API_KEY"),
])
def test_a_bad_illustrator_stops_start_up_naming_it(environ, named):
    with pytest.raises(ConfigError) as refused:
        load_settings(environ, env_file="/nonexistent")
    assert named in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(("env", "narrator"), [
    ({"OPENAI_API_KEY": "k"}, "openai"),  # OpenAI itself reads aloud
    ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://localhost:11434/v1"}, "off"),
    ({}, "off"),  # the demo: the device's own voice
    ({"OPENAI_API_KEY": "k", "STORYTELLER": "demo"}, "off"),
    ({"OPENAI_API_KEY": "k", "NARRATOR": "off"}, "off"),
    ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://kokoro:8880/v1", "NARRATOR": "speech",
      "VOICE_MODEL": "kokoro", "VOICE": "af_heart"}, "speech"),
])
def test_narrator_auto_reads_aloud_with_openai_itself_only(env, narrator):
    assert settings_from(**env).narrator == narrator


def test_the_voice_settings_are_read_and_defaulted():
    openai = settings_from(OPENAI_API_KEY="k")
    assert (openai.voice_model, openai.voice) == ("gpt-audio-1.5", "sage")
    chosen = settings_from(OPENAI_API_KEY="k", VOICE_MODEL="gpt-audio-mini", VOICE="marin")
    assert (chosen.voice_model, chosen.voice) == ("gpt-audio-mini", "marin")
    speech = settings_from(OPENAI_API_KEY="k", NARRATOR="speech", VOICE_MODEL="kokoro",
                           VOICE="af_heart")
    assert (speech.voice_model, speech.voice) == ("kokoro", "af_heart")


@pytest.mark.parametrize(("env", "named"), [
    ({"OPENAI_API_KEY": "k", "NARRATOR": "loud"}, "NARRATOR must be one of"),
    ({"NARRATOR": "openai"}, "NARRATOR=openai needs OPENAI_API_KEY"),
    ({"NARRATOR": "speech", "VOICE_MODEL": "kokoro"}, "NARRATOR=speech needs OPENAI_API_KEY"),
    ({"OPENAI_API_KEY": "k", "NARRATOR": "speech"}, "NARRATOR=speech needs VOICE_MODEL"),
    ({"OPENAI_API_KEY": "k", "VOICE": "robot"}, "VOICE must be one of"),
    ({"OPENAI_API_KEY": "k", "NARRATOR": "speech", "VOICE_MODEL": "kokoro", "VOICE": "v" * 101},
     "VOICE must be at most 100"),
])
def test_a_bad_narration_setting_names_its_variable(env, named):
    with pytest.raises(ConfigError, match=named):
        settings_from(**env)
