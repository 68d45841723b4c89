"""The invariant check: what `python -m app check` reports about the jobs and stories.

    report = await check_invariants(store, settings)
    print(report.format()); sys.exit(1 if report.broken else 0)

Orphaned stories are reported but are not a broken invariant: they are what the design
leaves behind when the sweeper beats a worker that was still finishing (the story is
kept because it was paid for).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Settings
from app.jobs import JobStore


@dataclass(frozen=True)
class Finding:
    label: str
    ids: list[int]
    is_error: bool


@dataclass(frozen=True)
class Report:
    findings: list[Finding]

    @property
    def broken(self) -> bool:
        return any(finding.ids and finding.is_error for finding in self.findings)

    def count(self, label: str) -> int:
        return next(len(f.ids) for f in self.findings if f.label == label)

    def format(self) -> str:
        lines = []
        for finding in self.findings:
            ids = ", ".join(str(i) for i in finding.ids[:50])
            more = " …" if len(finding.ids) > 50 else ""
            note = "" if finding.is_error else " (reported, not an error)"
            lines.append(
                f"{finding.label:<40} {len(finding.ids):>5}"
                + (f"  ids: {ids}{more}" if finding.ids else "")
                + (note if finding.ids else "")
            )
        lines.append("invariants: BROKEN" if self.broken else "invariants: ok")
        return "\n".join(lines)


async def check_invariants(store: JobStore, settings: Settings) -> Report:
    stale_s = settings.heartbeat_stale_s
    threshold_s = settings.sweeper_threshold_min * 60
    return Report([
        Finding("completed jobs without a story", await store.ids("check_completed_without_story"),
                True),
        Finding("orphaned stories (job not completed)", await store.ids("check_orphaned_stories"),
                False),
        Finding("running jobs with a dead heartbeat",
                await store.ids("check_dead_running", stale_s=stale_s), True),
        Finding("pending jobs no queue holds",
                await store.ids("check_stranded_pending", stale_s=stale_s,
                                threshold_s=threshold_s), True),
    ])
