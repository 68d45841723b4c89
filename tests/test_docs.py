"""The docs that must stay true: the module map is generated from the code, the state
machine's one table (docs/architecture.md) is checked against the statements it names, and
`make docs` fails on a broken link or a page left out of the nav."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.queries import load_queries

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
_CODE = re.compile(r"`([^`]+)`")


@pytest.mark.slow
def test_the_module_map_is_current():
    result = subprocess.run([sys.executable, "tools/module_map.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def state_table() -> list[tuple[str, list[str], list[str]]]:
    """(statement, function files, guard fragments) for each row of the state table."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## The state machine", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("| `"):
            continue
        names = _CODE.findall(cells[0])
        files = [name for name in names[1:] if name.startswith("sql/functions/")]
        rows.append((names[0], files, _CODE.findall(cells[2])))
    return rows


def normalised(sql: str) -> str:
    return " ".join(sql.split())


def statement_text(name: str, files: list[str]) -> str:
    parts = [load_queries().get(name, "")]
    parts += [(ROOT / file).read_text(encoding="utf-8") for file in files]
    return normalised("\n".join(parts))


def missing_guards(rows: list[tuple[str, list[str], list[str]]],
                   text_of=statement_text) -> list[str]:
    return [f"{name}: {guard}" for name, files, guards in rows for guard in guards
            if normalised(guard) not in text_of(name, files)]


_SETS_STATE = re.compile(
    r"\bUPDATE story_jobs\s+SET\b(?:(?!\bWHERE\b).)*?\b(status|claimed_by)\s*=", re.S)
_MAKES_OR_DROPS = re.compile(r"\b(DELETE FROM story_jobs|(intake_job|insert_job|"
                             r"insert_picture_job|insert_narration_jobs)\s*\()")


def status_writers() -> set[str]:
    """Every named statement that moves a job: sets its status or its owner, makes a job,
    drops one."""
    return {name for name, sql in load_queries().items()
            if _SETS_STATE.search(sql) or _MAKES_OR_DROPS.search(sql)}


def test_the_state_table_has_a_row_for_every_status_write_and_no_other():
    names = [name for name, _, _ in state_table()]
    assert len(names) == len(set(names))
    assert set(names) == status_writers()


def test_every_guard_in_the_state_table_stands_in_its_statement():
    rows = state_table()
    assert all(guards for _, _, guards in rows)
    assert missing_guards(rows) == []


@pytest.mark.parametrize(("name", "guard"), [
    ("claim_next_job", "FOR UPDATE SKIP LOCKED"),
    ("fail_job", "status = 'running' AND claimed_by = :boot_id"),
    ("intake_job", "ON CONFLICT (idempotency_key) DO NOTHING"),
])
def test_the_check_sees_a_guard_the_statement_lost(name, guard):
    def without_the_guard(statement: str, files: list[str]) -> str:
        text = statement_text(statement, files)
        return text.replace(normalised(guard), "") if statement == name else text

    rows = state_table()
    assert missing_guards(rows) == []
    assert missing_guards(rows, without_the_guard) == [f"{name}: {guard}"]


# tools/docs_check.py (make docs, before zensical): what zensical's --strict does not check.
_CHECK = importlib.util.spec_from_file_location("docs_check", ROOT / "tools" / "docs_check.py")
assert _CHECK is not None and _CHECK.loader is not None
docs_check = importlib.util.module_from_spec(_CHECK)
_CHECK.loader.exec_module(docs_check)

SITE = """\
site_name: A site
docs_dir: docs
nav:
  - Home: index.md
  - Part:
      - Guide: guide.md
      - Elsewhere: https://example.com/
"""


def site(tmp_path: Path, guide: str, config: str = SITE) -> Path:
    (tmp_path / "docs" / "pictures").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text(config)
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the guide](guide.md#a-part).\n")
    (tmp_path / "docs" / "guide.md").write_text(guide)
    (tmp_path / "docs" / "pictures" / "fox.png").write_bytes(b"\x89PNG")
    return tmp_path


def test_the_docs_pass_their_own_check():
    assert docs_check.problems() == []


def test_a_site_whose_links_and_nav_hold_passes(tmp_path):
    guide = ("# Guide\n\n![A fox](pictures/fox.png) [home](index.md \"Home\"), "
             "[a part](#a-part), [mail](mailto:a@b.c), [web](https://example.com/x.md)\n\n"
             "`[in code](../app/x.py)`\n\n```md\n[in a block](missing.png)\n```\n")
    assert docs_check.problems(site(tmp_path, guide)) == []


def test_a_page_left_out_of_the_nav_and_a_nav_entry_with_no_page_fail(tmp_path):
    root = site(tmp_path, "# Guide\n", SITE.replace("guide.md", "gone.md"))
    assert docs_check.problems(root) == [
        "mkdocs.yml: the nav names gone.md, which is not in docs/",
        "docs/guide.md: not in mkdocs.yml's nav"]


def test_links_to_missing_files_or_out_of_the_docs_fail(tmp_path):
    guide = ("# Guide\n\n![A cat](pictures/cat.png) [code](../app/config.py) "
             "[root](/index.md)\n\n[ref]: ../README.md\n")
    assert docs_check.problems(site(tmp_path, guide)) == [
        "docs/guide.md: a link to pictures/cat.png: no such file",
        "docs/guide.md: a link to ../app/config.py: outside docs/: link to the repository's "
        "page instead",
        "docs/guide.md: a link to /index.md: an absolute path: link relative to the page",
        "docs/guide.md: a link to ../README.md: outside docs/: link to the repository's "
        "page instead"]


def test_zensical_s_strict_build_fails_on_a_link_to_a_missing_page_or_anchor(tmp_path):
    """make docs's build itself: a link zensical can resolve fails it, strictly."""
    def build(guide: str) -> subprocess.CompletedProcess[str]:
        root = site(tmp_path / str(len(list(tmp_path.iterdir()))), guide)
        return subprocess.run([sys.executable, "-m", "zensical", "build", "--strict",
                               "--config-file", str(root / "mkdocs.yml")],
                              cwd=root, capture_output=True, text=True)

    assert build("# Guide\n\n## A part\n").returncode == 0
    for guide in ("# Guide\n\n## A part\n\n[gone](gone.md)\n",
                  "# Guide\n\n## A part\n\n[home](index.md#no-such-part)\n"):
        failed = build(guide)
        assert failed.returncode != 0 and "does not exist" in failed.stdout + failed.stderr
