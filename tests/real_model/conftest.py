"""The real tier: a real OpenAI-compatible server (llama-cpp-python) with a real small model
(SmolLM2-135M-Instruct) on the CPU, and the app started as the README says, driven over HTTP.

`make test-real` runs it (`-m real_model`; `make test` leaves it out). The server is built
once, outside the clone (tools/real_model_env.py); where it cannot be built (no compiler)
the tier is skipped with that reason, except in CI (CI set, or REAL_MODEL_REQUIRED=1),
where that fails it. Each story's figures are gathered in one table, printed at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.fake_llm import free_port
from tests.helpers.llama_server import MODEL, LlamaServer, build, real_model_env
from tests.helpers.platform import ROOT

RESULTS: list[dict] = []
FIGURES: dict[str, object] = {}


def _required() -> bool:
    return (os.environ.get("REAL_MODEL_REQUIRED") == "1"
            or os.environ.get("CI", "").lower() not in ("", "0", "false"))


@pytest.fixture(scope="session")
def llama_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    log = tmp_path_factory.mktemp("build") / "build.log"
    started = time.monotonic()
    problem = build(log)
    if problem is not None:
        if _required():
            pytest.fail(f"the real tier must run here: {problem}", pytrace=False)
        pytest.skip(problem)
    env = real_model_env()
    assert env is not None
    FIGURES["build"] = (f"{env['llama_cpp']}, built in {env['build_seconds']} s "
                        f"(this run waited {time.monotonic() - started:.0f} s)")
    return env


@pytest.fixture(scope="session")
def llama(llama_env: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer(llama_env, tmp_path_factory.mktemp("llama") / "server.log") as server:
        FIGURES["tokens/s"] = f"{server.tokens_per_second():.0f}"
        yield server


class RealApp:
    """`python -m app serve`, as the README starts it against a local server."""

    def __init__(self, database_url: str, llm_url: str, log_path: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "STORY"))},
            "DATABASE_URL": database_url, "PORT": str(self.port),
            "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "anything", "STORY_MODEL": MODEL,
            "DAILY_STORY_LIMIT": "1000", **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "app", "serve"], cwd=ROOT,
                                            env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not start; see {self.log_path}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def start_app(llama: LlamaServer, database_url: str, tmp_path: Path):  # llama first: a
    # tier that cannot run says so before a database is started
    """start_app(**env) -> a started RealApp (stopped after the test)."""
    apps: list[RealApp] = []

    def start(**env: str) -> RealApp:
        app = RealApp(database_url, llama.url, tmp_path / f"app-{len(apps)}.log", **env)
        apps.append(app)
        app.start()
        return app

    yield start
    for app in apps:
        app.stop()


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not RESULTS and not FIGURES:
        return
    write = terminalreporter.write_line
    write("")
    write("real model: " + "; ".join(f"{k} {v}" for k, v in FIGURES.items()))
    write(f"{'story':<26} {'asked':>5} {'wrote':>5} {'s':>5}  {'family saw':<44} title")
    for row in RESULTS:
        write(f"{row['story']:<26} {row['asked']:>5} {row['words']:>5} {row['seconds']:>5.0f}  "
              f"{row['saw'][:44]:<44} {(row['title'] or '')[:90]!r}")
