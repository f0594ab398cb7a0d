"""``load_config_text``: a configuration held in memory, validated with the messages of ``--config``."""

from __future__ import annotations

import pytest

from kubesched.config.load import load_config, load_config_text
from kubesched.errors import ConfigError

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_same_result_and_messages_as_a_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = (
        HEAD + "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
        "      enabled: [{name: NodeResourcesFit, weight: 10}]\n"
    )
    f = tmp_path / "sched.yaml"
    f.write_text(text)
    assert load_config_text(text, "sched.yaml") == load_config(f)
    bad = HEAD + "podMaxBackoffSeconds: 0\n"
    f.write_text(bad)
    with pytest.raises(ConfigError) as from_file:
        load_config(f)
    with pytest.raises(ConfigError) as from_text:
        load_config_text(bad, str(f))
    assert (
        str(from_text.value)
        == str(from_file.value)
        == (f"{f}: podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds")
    )


def test_yaml_errors_and_duplicate_keys() -> None:
    with pytest.raises(ConfigError, match=r"^config.yaml: invalid YAML: "):
        load_config_text("a: [1\n", "config.yaml")
    with pytest.raises(ConfigError) as e:
        load_config_text(HEAD + "parallelism: 1\nparallelism: 2\n", "config.yaml")
    assert str(e.value) == 'config.yaml: line 4: key "parallelism" already set in map'
