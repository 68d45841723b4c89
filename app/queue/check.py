"""The invariant check: what `python -m app check` reports about the jobs and stories.

    report = await check_invariants(db, settings)
    print(report.format()); sys.exit(1 if report.broken else 0)

Every finding is a defect: a story (or a picture, or a narration's part) its job cannot
reach was paid for and is not where the family looks; a job expired while a worker was
alive should have run; a provider call missing from the ledger was paid for and not
counted against the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Settings
from app.queries import Queryable, Statements


@dataclass(frozen=True)
class Finding:
    label: str
    ids: list[int]


@dataclass(frozen=True)
class Report:
    findings: list[Finding]

    @property
    def broken(self) -> bool:
        return any(finding.ids for finding in self.findings)

    def count(self, label: str) -> int:
        return next(len(f.ids) for f in self.findings if f.label == label)

    def format(self) -> str:
        lines = []
        for finding in self.findings:
            ids = ", ".join(str(i) for i in finding.ids[:50])
            more = " …" if len(finding.ids) > 50 else ""
            lines.append(
                f"{finding.label:<40} {len(finding.ids):>5}"
                + (f"  ids: {ids}{more}" if finding.ids else "")
            )
        lines.append("invariants: BROKEN" if self.broken else "invariants: ok")
        return "\n".join(lines)


class Invariants(Statements):
    """The only code that knows the invariant queries' names (sql/queries/checks.sql)."""

    async def ids(self, query: str, **params: object) -> list[int]:
        """The ids a check query finds (`check_completed_without_story`, ...)."""
        assert query.startswith("check_"), query
        rows = await self._all(query, params)
        return [row["id"] for row in rows]


async def check_invariants(db: Queryable, settings: Settings) -> Report:
    store = Invariants(db)
    stale_s = settings.heartbeat_stale_s
    threshold_s = settings.sweeper_threshold_min * 60
    return Report([
        Finding("completed jobs without a story",
                await store.ids("check_completed_without_story")),
        Finding("stories not reachable from their job",
                await store.ids("check_unreachable_stories")),
        Finding("completed picture jobs without a picture",
                await store.ids("check_completed_without_picture")),
        Finding("pictures not reachable from their job",
                await store.ids("check_unreachable_pictures")),
        Finding("completed narration parts without audio",
                await store.ids("check_completed_without_narration")),
        Finding("narration parts not reachable from their job",
                await store.ids("check_unreachable_narrations")),
        Finding("running jobs with a dead heartbeat",
                await store.ids("check_dead_running", stale_s=stale_s)),
        Finding("pending jobs with no live worker",
                await store.ids("check_stranded_pending", threshold_s=threshold_s,
                                interval_s=settings.sweeper_interval_s)),
        Finding("jobs expired while a worker was alive",
                await store.ids("check_expired_while_alive", threshold_s=threshold_s)),
        Finding("provider calls not in the ledger",
                await store.ids("check_calls_not_in_ledger")),
    ])
