"""Every shell block of README.md runs as pasted, from the repository root, and exits 0.

Each ```sh block runs in bash (``set -euo pipefail``) in a scratch copy of the repository root
(its top-level entries linked, so files the block writes land in the scratch directory), with
``../shared`` linked when the machine has it; a block that reads ``../shared`` is skipped when
it does not. Background jobs a block starts are killed when it ends. Two kinds of lines are not
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
SHARED = Path(os.environ["KUBESCHED_SHARED_DATA"]).parent if os.environ.get("KUBESCHED_SHARED_DATA") \
    else ROOT.parent / "shared"
README = ROOT / "README.md"
TIMEOUT = 600
_PIP = re.compile(r"^pip install [^&]*&&\s*")


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text()
    out = []
    for m in re.finditer(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        out.append((text[: m.start()].count("\n") + 1, m.group(1)))
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


BLOCKS = _blocks()


def test_readme_has_shell_blocks() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(("line", "block"), BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_block_runs_as_pasted(line: int, block: str, tmp_path: Path) -> None:
    script = _prepare(block)
    if script is None:
        pytest.skip("the test suite's own command")
    if "../shared" in script and not SHARED.is_dir():
        pytest.skip("needs ../shared/data")
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git",):
            (work / entry.name).symlink_to(entry)
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + script], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
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
    assert proc.returncode == 0, f"README.md block at line {line} failed:\n{script}\n--- output ---\n{out[-4000:]}"


def _kill_pid_file(path: Path) -> None:
    try:
        os.kill(int(path.read_text().strip()), signal.SIGKILL)
    except (ValueError, ProcessLookupError, OSError):
        pass
