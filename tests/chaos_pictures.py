"""The crash campaign's picture moments (tests/chaos.py runs them among its own): `kill -9`
while a story's picture is being drawn, with the Images API of the fake provider.

- picture_during_call      one process; its picture call is in flight (the fake never
                           answers it); the app is restarted
- picture_two_processes    two processes drawing pictures (seeded drawing times), a seeded
                           one killed while one of its picture calls is in flight; the
                           survivor alone must finish

A run passes when, on top of tests/chaos.py's story checks: every story has exactly one
picture job; no picture job had more than one images call and none was drawn without its
job claimed; the picture jobs of the dead process ended `failed` ('interrupted'), never
drawn again; every other picture job `completed` with its picture stored, and every
stored picture belongs to a completed picture job; every story job completed with one
story; no log has an ERROR line; `python -m app check` finds nothing broken; and nothing is
left set aside, with one ledger row per provider call counted at the fake (each stored
story, each drawn picture, and each picture cut off by the kill after its call was made).
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import asyncpg

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.processes import (
    AppProcess,
    ledger_problems,
    problems_in_logs_and_check,
    start_and_submit,
)

PICTURE_MOMENTS = ("picture_during_call", "picture_two_processes")
TERMINAL_WITHIN_S = 120
MOMENT_WITHIN_S = 30


async def run_picture_once(seed: int, moment: str, database_url: str, fake: FakeLLM,
                           log_dir: Path, result) -> None:
    """One picture moment (`result`: tests.chaos.RunResult, filled in)."""
    rng = random.Random(seed)
    two = moment == "picture_two_processes"
    apps = [AppProcess(database_url, fake.url, log_dir / f"chaos-{seed}-{moment}-{n}.log")
            for n in range(2 if two else 1)]
    for app in apps:
        app.log_path.unlink(missing_ok=True)
        app.env |= {"LLM_API": "chat", "ILLUSTRATOR": "openai"}
    victim = apps[rng.randrange(len(apps))]
    fake.release()
    if two:
        fake.images.delay_s = rng.uniform(0.6, 1.5)  # the kill lands within it
    else:
        fake.images.mode = "hang"
    conn = await asyncpg.connect(database_url)
    try:
        job_ids = await start_and_submit(apps, rng, seed, most=3)
        target = await _picture_in_flight(conn, fake, victim)
        await asyncio.sleep(rng.uniform(0.0, 0.2))
        victim_pid = victim.pid  # a restart gives the victim a new one
        victim.kill9()
        result.kills += 1
        drawn_at_kill = {row["job_id"] for row in await conn.fetch(
            "SELECT job_id FROM story_pictures")}
        if target in drawn_at_kill:  # the app won the race: nothing was tested
            result.missed = f"picture job {target} was stored before the kill"
            return
        fake.images.mode = "ok"
        fake.images.delay_s = 0.0
        restarted = time.monotonic()
        survivors = [a for a in apps if a is not victim]
        if not survivors:
            await victim.start()
        while await conn.fetchval(
                "SELECT count(*) FROM story_jobs WHERE status IN ('pending', 'running')"):
            if time.monotonic() - restarted > TERMINAL_WITHIN_S:
                result.problems.append("jobs not terminal after the kill")
                break
            await asyncio.sleep(0.05)
        result.restart_to_terminal_s = time.monotonic() - restarted
        result.target_done_s = result.restart_to_terminal_s
        await asyncio.sleep(0.5)  # a second draw, were there one, would have begun by now
        for app in apps:
            app.stop()
        await _check(conn, fake, job_ids, target, victim_pid, result)
        result.problems += problems_in_logs_and_check(apps)
        result.problems += await ledger_problems(conn, fake)
    finally:
        for app in apps:
            app.stop()
        await conn.close()


async def _picture_in_flight(conn: asyncpg.Connection, fake: FakeLLM,
                             victim: AppProcess) -> int:
    """A picture job of the victim's whose images call has reached the fake: its id."""
    deadline = time.monotonic() + MOMENT_WITHIN_S
    while time.monotonic() < deadline:
        for (job_id,) in await conn.fetch(
                "SELECT j.id FROM story_jobs j JOIN workers w ON w.boot_id = j.claimed_by"
                " WHERE j.kind = 'picture' AND j.status = 'running' AND w.pid = $1"
                " ORDER BY j.id", victim.pid):
            if fake.images.calls_for(job_id):
                return int(job_id)
        await asyncio.sleep(0.01)
    raise TimeoutError("moment not reached: a picture call of the victim's in flight")


async def _check(conn: asyncpg.Connection, fake: FakeLLM, job_ids: list[int], target: int,
                 victim_pid: int, result) -> None:
    rows = {row["id"]: row for row in await conn.fetch(
        "SELECT j.id, j.kind, j.status, j.error_text, j.started_at, j.picture_of, j.story_id,"
        " w.pid FROM story_jobs j LEFT JOIN workers w ON w.boot_id = j.claimed_by"
        " ORDER BY j.id")}
    stories = {row["id"]: row["job_id"] for row in await conn.fetch(
        "SELECT id, job_id FROM stories")}
    drawn = {row["job_id"] for row in await conn.fetch("SELECT job_id FROM story_pictures")}
    pictures = {j: row for j, row in rows.items() if row["kind"] == "picture"}
    result.jobs = len(rows)
    result.lost = sum(1 for j in job_ids if j not in rows)
    result.terminal = sum(1 for row in rows.values() if row["status"] in ("completed", "failed"))
    result.max_calls = max([fake.calls_for(j) for j in job_ids]
                           + [fake.images.calls_for(j) for j in pictures], default=0)
    result.interrupted = sum(1 for row in rows.values() if row["error_text"] == "interrupted")
    problems = result.problems
    if result.lost:
        problems.append(f"{result.lost} jobs lost")
    for job_id in job_ids:
        row = rows.get(job_id)
        if row is not None and (row["status"] != "completed" or stories.get(row["story_id"])
                                != job_id):
            problems.append(f"story job {job_id} ended {row['status']} ({row['error_text']})")
        if fake.calls_for(job_id) != 1:
            problems.append(f"story job {job_id} had {fake.calls_for(job_id)} LLM calls")
    per_story: dict[int, list[int]] = {}
    for job_id, row in pictures.items():
        per_story.setdefault(row["picture_of"], []).append(job_id)
    for story_id in stories:
        if len(per_story.get(story_id, [])) != 1:
            problems.append(f"story {story_id} has picture jobs {per_story.get(story_id)}")
    for job_id, row in pictures.items():
        calls = fake.images.calls_for(job_id)
        if calls > 1 or (calls and row["started_at"] is None):
            problems.append(f"picture job {job_id} had {calls} images calls"
                            f" (claimed: {row['started_at'] is not None})")
        # The dead process's: claimed by it (its claim may have committed after the kill, from
        # a statement its server backend was still running) and not drawn before it died.
        victims = row["pid"] == victim_pid and job_id not in drawn
        expected = ("failed", "interrupted") if victims else ("completed", None)
        if (row["status"], row["error_text"]) != expected:
            problems.append(f"picture job {job_id} ended {row['status']} ({row['error_text']}),"
                            f" expected {expected[0]}"
                            + (" (its process was killed mid-call)" if victims else ""))
        if (job_id in drawn) != (row["status"] == "completed"):
            problems.append(f"picture job {job_id} is {row['status']} with"
                            f" {'a' if job_id in drawn else 'no'} picture stored")
    if rows.get(target) is None or rows[target]["error_text"] != "interrupted":
        problems.append(f"the picture job killed mid-call, {target}, was not interrupted")
    strays = fake.images.total_calls() - sum(fake.images.calls_for(j) for j in pictures)
    if strays:
        problems.append(f"{strays} images calls for no picture job of this run")
    result.note = (f"{len(pictures)} pictures, {len(drawn)} drawn,"
                   f" {fake.images.total_calls()} images calls")
