"""Named SQL statements, loaded from `sql/queries.sql`.

    -- name: claim_job
    -- pending -> running: the worker takes a job it was handed.
    UPDATE story_jobs SET ...

Each statement sits under its `-- name:` header; the comment lines after it describe it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
_HEADER = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def parse_queries(text: str) -> dict[str, str]:
    """Split a file of named statements into {name: sql}."""
    chunks = _HEADER.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(chunks[1::2], chunks[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        sql = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("--"))
        queries[name] = sql.strip().rstrip(";")
    return queries


@cache
def load_queries() -> dict[str, str]:
    return parse_queries((SQL_DIR / "queries.sql").read_text())
