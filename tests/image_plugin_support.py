"""A small layered image catalogue shared by the image plugin tests: two GPU images sharing a
30 MB base and a 2 GB CUDA layer, and a 2 MB CPU image."""

from __future__ import annotations

from pathlib import Path

CATALOGUE = """
version: 1
images:
  - name: app:1
    class: gpu
    source: test
    confidence: derived
    layers:
      - {id: base, size_bytes: 30000000}
      - {id: cuda, size_bytes: 2000000000}
      - {id: app1, size_bytes: 100000000}
  - name: app:2
    class: gpu
    source: test
    confidence: derived
    layers:
      - {id: base, size_bytes: 30000000}
      - {id: cuda, size_bytes: 2000000000}
      - {id: app2, size_bytes: 400000000}
  - name: tiny:1
    class: cpu
    source: test
    confidence: derived
    layers:
      - {id: tiny, size_bytes: 2000000}
"""


def write_catalogue(directory: Path) -> str:
    """Write :data:`CATALOGUE` into ``directory`` and return the file's path."""
    path = directory / "catalogue.yaml"
    path.write_text(CATALOGUE)
    return str(path)
