"""The Procfile's lines, run as a PaaS would run them."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.fake_llm import free_port
from tests.helpers.platform import ROOT, procfile


def environment(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "STORYTELLER"))}
    bin_dir = str(Path(sys.executable).parent)
    return env | {"DATABASE_URL": database_url, "PATH": f"{bin_dir}:{env.get('PATH', '')}",
                  "DEMO_DELAY_S": "0.1", **extra}


@pytest.mark.slow
def test_the_release_line_migrates_and_can_run_twice(database_url, tmp_path):
    command = procfile()["release"]
    assert command == "python -m app migrate"
    for _ in range(2):
        result = subprocess.run(
            shlex.split(command), cwd=ROOT, env=environment(database_url),
            capture_output=True, text=True, timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "migrate:" in result.stdout


@pytest.mark.slow
def test_the_web_line_serves_healthz_on_port_and_stops_cleanly_on_sigterm(database_url):
    port = free_port()
    command = procfile()["web"]
    assert command.startswith("uvicorn app.main:app --host 0.0.0.0 --port $PORT")
    process = subprocess.Popen(
        shlex.split(command.replace("$PORT", str(port))), cwd=ROOT,
        env=environment(database_url, PORT=str(port)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read()
                assert time.monotonic() < deadline, "the web process did not start"
                time.sleep(0.1)
        assert response.status_code == 200
        assert response.json()["database"] == "ok" and response.json()["worker"] == "running"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        output = process.stdout.read()
        process.stdout.close()
    assert "event=started" in output and "event=stopped" in output
    assert "Traceback" not in output
