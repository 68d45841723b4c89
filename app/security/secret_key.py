"""The secret key: SECRET_KEY, or one generated at the first start and kept on disk.

    key = load_secret_key(settings)     # the same key at every start, in every process

Sessions, device cookies and CSRF tokens are all derived from it.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from app.config import Settings


def load_secret_key(settings: Settings) -> str:
    """SECRET_KEY, or one generated once and kept in data_dir/secret_key (mode 0600)."""
    if settings.secret_key:
        return settings.secret_key
    path = Path(settings.data_dir) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made by an earlier start (or a process starting alongside)
        for _ in range(50):
            key = path.read_text().strip()
            if key:
                return key
            time.sleep(0.01)  # the other process is still writing it
        raise RuntimeError(f"{path} is empty; delete it or set SECRET_KEY") from None
    with os.fdopen(fd, "w") as file:
        file.write(secrets.token_urlsafe(48))
    return path.read_text().strip()
