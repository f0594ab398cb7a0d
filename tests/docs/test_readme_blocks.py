"""Every shell block of README.md, and every shell block of docs/*.md marked runnable
(```` ```sh runnable ````), runs as pasted, from the repository root, and exits 0. README.md links
every page of docs/.

Each ```sh block runs in bash (``set -euo pipefail``) in a scratch copy of the repository root
(its top-level entries linked, so files the block writes land in the scratch directory), with
``../shared`` linked and ``OPENB`` set to its openb trace directory when the machine has it; a
block that reads ``../shared`` or ``$OPENB`` is skipped when it does not. Background jobs a block starts are killed when it ends. Two kinds of lines are not
run, because the environment under test already did them: ``pip install`` (the test runs inside
the environment ``.ci/run`` installed, so a block's ``pip install ... &&`` prefix is dropped),
and the block whose command is the test suite itself (it would run this test again).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: ``../shared`` as the README says; KUBESCHED_SHARED_DATA (the data directory) points elsewhere
SHARED = (
    Path(os.environ["KUBESCHED_SHARED_DATA"]).parent
    if os.environ.get("KUBESCHED_SHARED_DATA")
    else ROOT.parent / "shared"
)
README = ROOT / "README.md"
TIMEOUT = 600
_PIP = re.compile(r"^pip install [^&]*&&\s*")


def _blocks(path: Path, marked_only: bool) -> list[tuple[str, str]]:
    """(``file:line``, block) of the ```sh blocks of ``path`` (``marked_only``: ```sh runnable)."""
    text = path.read_text()
    info = r"sh runnable" if marked_only else r"sh(?: runnable)?"
    out = []
    for m in re.finditer(rf"^```{info}\n(.*?)^```", text, flags=re.S | re.M):
        out.append((f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}", m.group(1)))
    return out


def _prepare(block: str) -> str | None:
    """The script to run, or None when the block is the test suite's own command."""
    lines = []
    for line in block.splitlines():
        stripped = line.strip()
        if re.search(r"(^|\s)(python -m pytest|pytest)(\s|$)", stripped) and not stripped.startswith("#"):
            return None
        lines.append(_PIP.sub("", line) if _PIP.match(stripped) else line)
    return "\n".join(lines) + "\n"


DOCS = sorted((ROOT / "docs").glob("*.md"))
README_BLOCKS = _blocks(README, marked_only=False)
DOC_BLOCKS = [b for page in DOCS for b in _blocks(page, marked_only=True)]
BLOCKS = README_BLOCKS + DOC_BLOCKS


def test_readme_has_shell_blocks() -> None:
    assert len(README_BLOCKS) >= 6
    assert DOC_BLOCKS, "no docs page marks a block runnable"


def test_readme_links_every_docs_page() -> None:
    text = README.read_text()
    missing = [p.name for p in DOCS if f"](docs/{p.name})" not in text]
    assert missing == []


@pytest.mark.parametrize(("line", "block"), BLOCKS, ids=[line for line, _ in BLOCKS])
def test_block_runs_as_pasted(line: str, block: str, tmp_path: Path) -> None:
    script = _prepare(block)
    if script is None:
        pytest.skip("the test suite's own command")
    openb = SHARED / "data" / "alibaba-gpu-2023"
    if ("../shared" in script and not SHARED.is_dir()) or ("$OPENB" in script and not openb.is_dir()):
        pytest.skip("needs the openb trace")
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git",):
            (work / entry.name).symlink_to(entry)
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "OPENB": str(openb),
    }
    proc = subprocess.Popen(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # background jobs of the block (serve, run)
        except ProcessLookupError:
            pass
        for pid_file in work.glob("*.pid"):
            _kill_pid_file(pid_file)
        for pid_file in Path("/tmp").glob("kubesched*.pid"):
            if pid_file.stat().st_mtime >= work.stat().st_mtime:
                _kill_pid_file(pid_file)
    assert proc.returncode == 0, f"the block at {line} failed:\n{script}\n--- output ---\n{out[-4000:]}"


def _kill_pid_file(path: Path) -> None:
    try:
        os.kill(int(path.read_text().strip()), signal.SIGKILL)
    except (ValueError, ProcessLookupError, OSError):
        pass
