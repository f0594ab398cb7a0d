"""Files that are either complete or absent: every report, snapshot and kubeconfig kubesched writes
is written to a temporary name in the target's directory and renamed over the target once closed
(``os.replace``, atomic on POSIX), so an interrupted or failed write never leaves a partial file
under the real name, and a reader never sees half a file.

No upstream counterpart (client-go's ``clientcmd.WriteToFile`` and kubelet's checkpoint files use
the same temporary-file-and-rename pattern).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_open", "atomic_write_text"]


@contextmanager
def atomic_open(path: str | Path, *, mode: int = 0o644, newline: str | None = None) -> Iterator[IO[str]]:
    """A text file (UTF-8) opened under a temporary name ``.NAME.XXXXXX`` beside ``path``; when the
    block ends normally it is given permission bits ``mode`` and renamed to ``path`` (replacing it),
    otherwise (an exception, KeyboardInterrupt) it is removed and ``path`` is left as it was.
    Raises OSError when the directory cannot take the file."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str, *, mode: int = 0o644) -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_open`; returns ``Path(path)``. Raises OSError."""
    with atomic_open(path, mode=mode) as fh:
        fh.write(text)
    return Path(path)
