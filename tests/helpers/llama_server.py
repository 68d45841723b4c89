"""llama-cpp-python's OpenAI-compatible server with SmolLM2-135M, as a process to start,
kill -9 and start again on the same port (tools/real_model_env.py builds it).

    env = real_model_env()                  # None: not built (see build_problem())
    with LlamaServer(env, log_path) as server:
        server.url                          # OPENAI_BASE_URL for the app (…/v1)
        server.kill9(); server.start()      # the same port, the model loaded again

Its context is 4,096 tokens, as a small local set-up has; it answers to MODEL whatever
model a request names. One thread: on a busy two-core machine two threads spin against each
other (measured: about 35 tokens a second with one, 25 with two).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import httpx

from tests.helpers.fake_llm import free_port
from tests.helpers.platform import ROOT

MODEL = "smollm2-135m"
N_CTX = 4096
START_TIMEOUT_S = 120


def _env_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_model_env",
                                                  ROOT / "tools" / "real_model_env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_model_env() -> dict | None:
    """The built server's details (env.json), or None."""
    path = _env_tool().env_file()
    return json.loads(path.read_text()) if path.exists() else None


def build(log_path: Path) -> str | None:
    """Build the server when needed (waits for a build under way); None when it is built,
    else why it cannot be."""
    tool = _env_tool()
    if tool.env_file().exists():
        return None
    missing = tool.missing_tools()
    if missing:
        return f"no {', '.join(missing)} on PATH to build llama-cpp-python"
    with log_path.open("ab") as log:
        done = subprocess.run([sys.executable, str(ROOT / "tools" / "real_model_env.py")],
                              stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:  # the tool's last line says why (its time limit, say)
        why = (log_path.read_text(errors="replace").strip().splitlines() or ["?"])[-1]
        return f"the llama-cpp-python build failed ({why}); see {log_path}"
    return None


class LlamaServer:
    def __init__(self, env: dict, log_path: Path, *, n_threads: int = 1) -> None:
        self.env = env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/v1"
        self.log_path = log_path
        self.n_threads = n_threads
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        command = [self.env["python"], "-m", "llama_cpp.server", "--model", self.env["model"],
                   "--model_alias", MODEL, "--n_ctx", str(N_CTX),
                   "--n_threads", str(self.n_threads),
                   "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the llama server did not start; see {self.log_path}")
            time.sleep(0.2)

    def kill9(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tokens_per_second(self, tokens: int = 128) -> float:
        """One plain completion's speed (tokens the server says it wrote, per second)."""
        started = time.monotonic()
        answer = httpx.post(f"{self.url}/chat/completions", timeout=120, json={
            "model": MODEL, "max_tokens": tokens, "stream": False,
            "messages": [{"role": "user", "content": "Tell a short story about a cat."}]})
        answer.raise_for_status()
        written = answer.json()["usage"]["completion_tokens"]
        return written / (time.monotonic() - started)
