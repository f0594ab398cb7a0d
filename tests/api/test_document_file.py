"""The one reader of single-document YAML/JSON inputs: the messages name the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.api.document_file import parse_document, read_document
from kubesched.errors import ConfigError, ManifestError


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.yaml", b"a: [1\nb: 2\n", "invalid YAML: did not find expected ',' or ']' (line 2, column 2)"),
        ("bad.json", b'{"a": [1,\n', "invalid JSON: Expecting value (line 2, column 1)"),
        ("two.yaml", b"a: 1\n---\nb: 2\n", "invalid YAML: expected one document, found a second at line 2"),
        ("bin.yaml", b"\xff\xfe", "not valid UTF-8 text"),
        (
            "bomb.yaml",
            b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + b"".join(
                f"{c}: &{c} [".encode() + b", ".join([f"*{p}".encode()] * 10) + b"]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "invalid YAML: document contains excessive aliasing",
        ),
    ],
)
def test_messages_name_file_and_line(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ConfigError) as e:
        read_document(path)
    assert str(e.value).startswith(f"{path}: {message}")


def test_missing_file_and_error_class(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as e:
        read_document(tmp_path / "none.yaml", error=ManifestError)
    assert str(e.value) == f"{tmp_path / 'none.yaml'}: cannot read: No such file or directory"


def test_documents_and_hint() -> None:
    assert parse_document("", "x") is None
    assert parse_document("a: 1\n---\n", "x") == {"a": 1}  # an empty second document is none
    assert parse_document('{"a": 1}', "x") == {"a": 1}
    assert parse_document("{a: 1}", "x") == {"a": 1}  # flow YAML, not JSON
    with pytest.raises(ConfigError) as e:
        parse_document("kind: Pod\n---\nkind: Node\n", "t.yaml", hint="a trace is X")
    assert (
        str(e.value) == "t.yaml: invalid YAML: expected one document, found a second at line 2; a trace is X"
    )
