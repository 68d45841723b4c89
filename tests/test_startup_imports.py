"""A cold start is what a family waits through on a platform that stops idle machines: the
app serves before it loads what serving does not need yet. Started as uvicorn starts it
(the module, then the lifespan), with the provider's storyteller and a budget: the price
table, Pillow and the provider's library are not loaded by the time it serves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LATER = ("genai_prices", "PIL", "openai", "httpx2", "httpx")

SCRIPT = """
import asyncio, sys
import app.main

async def main():
    app_ = app.main.app
    events = asyncio.Queue()
    await events.put({"type": "lifespan.startup"})
    sent = []
    async def send(message):
        sent.append(message["type"])
    async def receive():
        return await events.get()
    task = asyncio.create_task(app_({"type": "lifespan", "asgi": {"version": "3.0"},
                                     "state": {}}, receive, send))
    while not sent:
        await asyncio.sleep(0)
    print(sent[0], sorted(name for name in sys.modules if name.split(".")[0] in LATER
                          and "." not in name))
    await events.put({"type": "lifespan.shutdown"})
    await task

asyncio.run(main())
""".replace("LATER", repr(LATER))


@pytest.mark.slow
def test_the_app_serves_before_loading_what_serving_does_not_need(database_url, fake_llm,
                                                                   tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "DATABASE"))}
    env |= {"PYTHONPATH": str(ROOT), "DATABASE_URL": database_url, "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": fake_llm.url, "ILLUSTRATOR": "demo", "MONTHLY_BUDGET": "5"}
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    served = next(line for line in result.stdout.splitlines() if line.startswith("lifespan."))
    assert served == "lifespan.startup.complete []", result.stdout
