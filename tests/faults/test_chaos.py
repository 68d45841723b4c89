"""A short crash campaign in every test run: one `kill -9` at each moment of a job's life,
with one process and with two, each moment a test of its own (so the workers share them
out). The long campaign is `make chaos` (45 seeded runs, each moment three times), which
`make test-all` runs."""

from __future__ import annotations

import pytest

from tests.chaos import MOMENTS, campaign, format_table

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("seed", "moment"), [(100 + i, m) for i, m in enumerate(MOMENTS)],
                         ids=list(MOMENTS))
async def test_kill_9_at_every_moment_loses_nothing_and_never_bills_twice(
        pg_url, tmp_path, seed, moment):
    results = await campaign(1, seed=seed, server_url=pg_url, log_dir=tmp_path,
                             moments=(moment,))
    table = format_table(results)
    assert [r.moment for r in results] == [moment]
    assert all(r.passed for r in results), table
    assert max(r.max_calls for r in results) == 1, table
    assert sum(r.lost for r in results) == 0, table
    assert sum(r.orphans for r in results) == 0, table  # every story reachable from its job
    assert sum(r.expired for r in results) == 0, table
