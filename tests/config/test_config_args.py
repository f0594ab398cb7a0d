"""decode_args: plugin args dataclasses from raw camelCase pluginConfig args."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field
from pydantic.dataclasses import dataclass

from kubesched.config import (
    ARGS_CONFIG,
    GoDuration,
    KubeSchedulerProfile,
    PluginConfig,
    decode_args,
    decode_plugin_args,
    load_config,
    plugin_args,
)
from kubesched.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "config"


@dataclass(config=ARGS_CONFIG)
class ResourceSpec:
    name: str
    weight: int = Field(default=1, ge=1, le=100)


@dataclass(config=ARGS_CONFIG)
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass(config=ARGS_CONFIG)
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(config=ARGS_CONFIG)
class ScoringStrategy:
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceSpec] = field(
        default_factory=lambda: [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@dataclass(config=ARGS_CONFIG)
class FitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


class Policy(StrEnum):
    HONOR = "Honor"
    IGNORE = "Ignore"


@dataclass(config=ARGS_CONFIG)
class MiscArgs:
    policy: Policy = Policy.IGNORE
    filter_timeout: GoDuration = 10.0
    enable_https: bool = Field(default=False, alias="enableHTTPS")

    def __post_init__(self) -> None:
        if self.filter_timeout < 0:
            raise ValueError("filterTimeout must not be negative")


def test_none_gives_defaults() -> None:
    args = decode_args(FitArgs, None, "profiles[0].pluginConfig")
    assert args == FitArgs()
    assert args.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]


def test_nested_decode_and_type_meta_ignored() -> None:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "NodeResourcesFitArgs",
        "ignoredResources": ["example.com/a"],
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 3}],
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
            },
        },
    }
    args = decode_args(FitArgs, raw, "p")
    assert args.ignored_resources == ["example.com/a"]
    assert args.ignored_resource_groups == []
    s = args.scoring_strategy
    assert s.type == "RequestedToCapacityRatio"
    assert s.resources == [ResourceSpec(name="cpu", weight=3)]
    assert s.requested_to_capacity_ratio == RequestedToCapacityRatioParam(
        shape=[
            UtilizationShapePoint(utilization=0, score=10),
            UtilizationShapePoint(utilization=100, score=0),
        ]
    )


def test_literal_error_path() -> None:
    with pytest.raises(ConfigError) as exc:
        decode_args(
            FitArgs, {"scoringStrategy": {"type": "LeastRequested"}}, "profiles[0].pluginConfig[1].args"
        )
    assert str(exc.value) == (
        "profiles[0].pluginConfig[1].args.scoringStrategy.type: "
        "Input should be 'LeastAllocated', 'MostAllocated' or 'RequestedToCapacityRatio'"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 101}]}},
            "a.scoringStrategy.resources[0].weight: Input should be less than or equal to 100",
        ),
        (
            {"scoringStrategy": {"resources": [{"weight": 2}]}},
            "a.scoringStrategy.resources[0].name: Required value",
        ),
        ({"ignoredResources": "x"}, "a.ignoredResources: Input should be a valid array"),
        ({"ignored_resourcez": []}, 'a.ignored_resourcez: unknown field "ignored_resourcez"'),
        ({"scoringStrategy": {"typo": 1}}, 'a.scoringStrategy.typo: unknown field "typo"'),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": "2"}]}},
            "a.scoringStrategy.resources[0].weight: Input should be a valid integer",
        ),
    ],
)
def test_errors(raw: dict[str, object], expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        decode_args(FitArgs, raw, "a")
    assert str(exc.value) == expected


def test_not_a_mapping() -> None:
    with pytest.raises(ConfigError) as exc:
        decode_args(FitArgs, [1, 2], "x.args")  # type: ignore[arg-type]
    assert str(exc.value) == "x.args: must be an object, got list"


def test_enum_duration_alias_and_post_init() -> None:
    args = decode_args(MiscArgs, {"policy": "Honor", "filterTimeout": "1m", "enableHTTPS": True}, "a")
    assert (args.policy, args.filter_timeout, args.enable_https) == (Policy.HONOR, 60.0, True)
    assert decode_args(MiscArgs, {"policy": None}, "a").policy is Policy.IGNORE
    with pytest.raises(ConfigError) as exc:
        decode_args(MiscArgs, {"filterTimeout": "-1s"}, "a")
    assert str(exc.value) == "a: filterTimeout must not be negative"
    with pytest.raises(ConfigError) as exc:
        decode_args(MiscArgs, {"filterTimeout": 5}, "a")
    assert str(exc.value) == 'a.filterTimeout: invalid duration 5: must be a string such as "15s"'


def test_plugin_args_lookup() -> None:
    prof = KubeSchedulerProfile(
        plugin_config=[
            PluginConfig(name="A", args={"x": 1}),
            PluginConfig(name="NodeResourcesFit", args={"ignoredResources": ["r"]}),
        ]
    )
    assert plugin_args(prof, "NodeResourcesFit", "profiles[2]") == (
        {"ignoredResources": ["r"]},
        "profiles[2].pluginConfig[1].args",
    )
    assert plugin_args(prof, "Missing", "profiles[2]") == (None, "profiles[2].pluginConfig")
    assert decode_plugin_args(FitArgs, prof, "NodeResourcesFit").ignored_resources == ["r"]
    assert decode_plugin_args(FitArgs, prof, "Missing") == FitArgs()


def test_bad_args_from_file_located() -> None:
    cfg = load_config(FIXTURES / "bad_args.yaml")  # args are only decoded by the plugins
    with pytest.raises(ConfigError) as exc:
        decode_plugin_args(FitArgs, cfg.profiles[0], "NodeResourcesFit", "profiles[0]")
    err = exc.value.located("bad_args.yaml")
    assert str(err) == (
        "bad_args.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.type: "
        "Input should be 'LeastAllocated', 'MostAllocated' or 'RequestedToCapacityRatio'"
    )
