"""A short crash campaign in every test run: one `kill -9` at each moment of a job's life,
with one process and with two. The long campaign is `make chaos` (30+ seeded runs)."""

from __future__ import annotations

import pytest

from tests.chaos import MOMENTS, campaign, format_table

pytestmark = pytest.mark.anyio


async def test_kill_9_at_every_moment_loses_nothing_and_never_bills_twice(pg_url, tmp_path):
    results = await campaign(len(MOMENTS), seed=100, server_url=pg_url, log_dir=tmp_path)
    table = format_table(results)
    assert [r.moment for r in results] == list(MOMENTS)
    assert all(r.passed for r in results), table
    assert max(r.max_calls for r in results) == 1, table
    assert sum(r.lost for r in results) == 0, table
    assert sum(r.orphans for r in results) == 0, table  # every story reachable from its job
    assert sum(r.expired for r in results) == 0, table
