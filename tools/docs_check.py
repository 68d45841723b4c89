"""What `make docs` checks before zensical builds the site, the checks zensical's --strict
leaves out (it fails on a link to a missing page or anchor, not on these):

- every page under docs/ is in mkdocs.yml's nav, and every page the nav names exists;
- every relative link or image of a page (to a page, a picture, any file) stays inside
  docs/ and names a file that is there: a link to `../app/config.py` or to a missing
  picture is broken on the site.

    .venv/bin/python tools/docs_check.py        # exit 1, one line per problem
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,}).*?^\1\2[`~]*[ \t]*$", re.S | re.M)
_CODE = re.compile(r"(`+).+?\1", re.S)
_INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)


def nav_pages(nav: object) -> list[str]:
    """The pages a nav names (its external links left out), in order."""
    if isinstance(nav, str):
        return [] if urlsplit(nav).scheme else [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    return []


def links(markdown: str) -> list[str]:
    """The link and image targets of a page, outside code blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", markdown))
    return _INLINE.findall(text) + _DEFINITION.findall(text)


def broken(page: Path, target: str, docs: Path) -> str | None:
    """Why `target`, linked from `page`, is broken on the site, or None."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path:  # another site, mail, or #anchor
        return None
    if parts.path.startswith("/"):
        return "an absolute path: link relative to the page"
    file = (page.parent / unquote(parts.path)).resolve()
    if not file.is_relative_to(docs.resolve()):
        return "outside docs/: link to the repository's page instead"
    if not file.exists():
        return "no such file"
    return None


def problems(root: Path = ROOT) -> list[str]:
    config = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = root / config.get("docs_dir", "docs")
    pages = {path.relative_to(docs).as_posix() for path in docs.rglob("*.md")}
    named = nav_pages(config.get("nav", []))
    found = [f"mkdocs.yml: the nav names {page}, which is not in {docs.name}/"
             for page in named if page not in pages]
    found += [f"{docs.name}/{page}: not in mkdocs.yml's nav"
              for page in sorted(pages - set(named))]
    for page in sorted(pages):
        for target in links((docs / page).read_text(encoding="utf-8")):
            reason = broken(docs / page, target, docs)
            if reason:
                found.append(f"{docs.name}/{page}: a link to {target}: {reason}")
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(f"docs: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
