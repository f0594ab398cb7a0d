"""Typed models of ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

Source: ``staging/src/k8s.io/kube-scheduler/config/v1/types.go`` plus the component-base
``ClientConnectionConfiguration``/``LeaderElectionConfiguration``/``DebuggingConfiguration``, with the
field defaults of ``pkg/scheduler/apis/config/v1/defaults.go``.

Conventions:

* Python attributes are snake_case; the file keys are the upstream camelCase JSON names
  (``podMaxBackoffSeconds``, ``enableHTTPS``). Both spellings are accepted on input.
* Decoding is strict like upstream's (``serializer.EnableStrict``): unknown fields are rejected,
  no string/number coercion. Use :func:`kubesched.config.load.parse_config` for file-shaped data
  (it validates in JSON mode and converts errors to :class:`kubesched.errors.ConfigError`).
* Scalar defaults (including upstream's "zero value means default" rules, e.g. ``qps: 0`` -> 50,
  ``httpTimeout: 0s`` -> 5s) are applied by the models. Profile defaults (one default profile,
  ``default-scheduler`` name, plugin merge) are applied by :func:`kubesched.config.defaults.apply_defaults`.
* Durations are float seconds (:data:`kubesched.config.duration.GoDuration`).
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_validator
from pydantic.alias_generators import to_camel

from kubesched.config.duration import GoDuration
from kubesched.config.extension_points import EXTENSION_POINT_TABLE

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"

MODEL_CONFIG: Final = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=True,
    extra="forbid",
    strict=True,
)
"""pydantic settings shared by every config model (camelCase aliases, strict, unknown fields rejected)."""

Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


def _b64_input(value: Any) -> Any:
    """Go ``[]byte`` fields are base64 strings in JSON; raw ``bytes`` pass through unchanged."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"illegal base64 data: {exc}") from None
    return value


Base64Bytes = Annotated[
    bytes,
    BeforeValidator(_b64_input),
    PlainSerializer(lambda b: base64.b64encode(b).decode("ascii"), return_type=str, when_used="json"),
]


class _Model(BaseModel):
    model_config = MODEL_CONFIG


class ClientConnectionConfiguration(_Model):
    """``clientConnection``: how the scheduler talks to the API server.

    ``qps`` is requests/second (float), ``burst`` a request count. Zero/empty values take the
    defaults (``contentType`` ``application/vnd.kubernetes.protobuf``, qps 50, burst 100).
    """

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: Int32 = 100

    @model_validator(mode="after")
    def _zero_means_default(self) -> ClientConnectionConfiguration:
        if not self.content_type:
            self.content_type = "application/vnd.kubernetes.protobuf"
            self.model_fields_set.discard("content_type")  # empty means unset
        if self.qps == 0:
            self.qps = 50.0
        if self.burst == 0:
            self.burst = 100
        return self


class LeaderElectionConfiguration(_Model):
    """``leaderElection`` (component-base). Durations in float seconds, parsed from Go strings.

    Defaults: ``leaderElect`` true, ``leaseDuration`` 15s, ``renewDeadline`` 10s, ``retryPeriod`` 2s,
    ``resourceLock`` ``leases``, ``resourceName`` ``kube-scheduler``, ``resourceNamespace`` ``kube-system``
    (zero durations and empty strings also take the defaults, as upstream).
    """

    leader_elect: bool = True
    lease_duration: GoDuration = 15.0
    renew_deadline: GoDuration = 10.0
    retry_period: GoDuration = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"

    @model_validator(mode="after")
    def _zero_means_default(self) -> LeaderElectionConfiguration:
        if self.lease_duration == 0:
            self.lease_duration = 15.0
        if self.renew_deadline == 0:
            self.renew_deadline = 10.0
        if self.retry_period == 0:
            self.retry_period = 2.0
        if not self.resource_lock:
            self.resource_lock = "leases"
        if not self.resource_name:
            self.resource_name = "kube-scheduler"
        if not self.resource_namespace:
            self.resource_namespace = "kube-system"
        return self


class Plugin(_Model):
    """One plugin entry ``{name, weight}``; ``weight`` is only meaningful for Score (None = unset)."""

    name: str
    weight: Int32 | None = None


class PluginSet(_Model):
    """``{enabled: [...], disabled: [...]}`` for one extension point. ``disabled`` may name ``*``."""

    enabled: list[Plugin] = Field(default_factory=list)
    disabled: list[Plugin] = Field(default_factory=list)

    def enabled_names(self) -> list[str]:
        """Names of the enabled plugins, in order (duplicates kept)."""
        return [p.name for p in self.enabled]

    def disabled_names(self) -> set[str]:
        """Names listed under ``disabled`` (may contain ``*``)."""
        return {p.name for p in self.disabled}

    def disables_all(self) -> bool:
        """True when ``disabled`` contains ``*``."""
        return any(p.name == "*" for p in self.disabled)


EXTENSION_POINTS: Final[tuple[str, ...]] = (*(p.attr for p in EXTENSION_POINT_TABLE), "multi_point")
"""Attribute names of :class:`Plugins`, in upstream struct order (``multi_point`` last)."""


def point_json_name(point: str) -> str:
    """camelCase file name of an extension-point attribute (``pre_filter`` -> ``preFilter``)."""
    return to_camel(point)


class Plugins(_Model):
    """``profiles[].plugins``: one :class:`PluginSet` per extension point (13 points)."""

    pre_enqueue: PluginSet = Field(default_factory=PluginSet)
    queue_sort: PluginSet = Field(default_factory=PluginSet)
    pre_filter: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    post_filter: PluginSet = Field(default_factory=PluginSet)
    pre_score: PluginSet = Field(default_factory=PluginSet)
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    pre_bind: PluginSet = Field(default_factory=PluginSet)
    bind: PluginSet = Field(default_factory=PluginSet)
    post_bind: PluginSet = Field(default_factory=PluginSet)
    multi_point: PluginSet = Field(default_factory=PluginSet)

    def point(self, point: str) -> PluginSet:
        """The :class:`PluginSet` of ``point`` (attribute name from :data:`EXTENSION_POINTS`).

        Raises:
            KeyError: unknown extension point.
        """
        if point not in EXTENSION_POINTS:
            raise KeyError(point)
        value: PluginSet = getattr(self, point)
        return value


class PluginConfig(_Model):
    """``profiles[].pluginConfig[]``: ``{name, args}``; ``args`` stays the raw camelCase mapping
    (decode it with :func:`kubesched.config.args.decode_args`)."""

    name: str
    args: dict[str, Any] | None = None


class KubeSchedulerProfile(_Model):
    """One scheduling profile. ``scheduler_name`` None = unset (defaulted to ``default-scheduler``
    only when it is the single profile); ``plugins`` None = all defaults."""

    scheduler_name: str | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = Field(default_factory=list)


class ExtenderTLSConfig(_Model):
    """``extenders[].tlsConfig``. ``*_data`` are PEM bytes (base64 strings in the file)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: Base64Bytes = b""
    key_data: Base64Bytes = b""
    ca_data: Base64Bytes = b""


class ExtenderManagedResource(_Model):
    """An extended resource managed by an extender; ``ignored_by_scheduler`` resources are skipped
    by NodeResourcesFit's Filter."""

    name: str
    ignored_by_scheduler: bool = False


class Extender(_Model):
    """``extenders[]`` (``pkg/scheduler/extender.go``). ``http_timeout`` in float seconds (default 5s; 0 ->
    5s).

    ``weight`` multiplies prioritize scores (must be > 0 when ``prioritize_verb`` is set).
    """

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: Int64 = 0
    bind_verb: str = ""
    enable_https: bool = Field(default=False, alias="enableHTTPS")
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: GoDuration = 5.0
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = Field(default_factory=list)
    ignorable: bool = False

    @property
    def name(self) -> str:
        """Upstream's extender name: its ``urlPrefix``."""
        return self.url_prefix

    @model_validator(mode="after")
    def _zero_means_default(self) -> Extender:
        if self.http_timeout == 0:
            self.http_timeout = 5.0
        return self


class KubeSchedulerConfiguration(_Model):
    """The whole ``KubeSchedulerConfiguration`` v1 document.

    Defaults: ``parallelism`` 16, ``percentageOfNodesToScore`` None (= 0 = adaptive,
    ``pkg/scheduler/schedule_one.go`` ``numFeasibleNodesToFind``),
    ``podInitialBackoffSeconds`` 1, ``podMaxBackoffSeconds`` 10, ``enableProfiling`` true,
    ``enableContentionProfiling`` = ``enableProfiling`` when unset, ``delayCacheUntilActive`` false.
    ``healthzBindAddress``/``metricsBindAddress`` are accepted for old files but ignored (deprecated;
    upstream serves both on the secure port).
    """

    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: Int32 = 16
    leader_election: LeaderElectionConfiguration = Field(default_factory=LeaderElectionConfiguration)
    client_connection: ClientConnectionConfiguration = Field(default_factory=ClientConnectionConfiguration)
    healthz_bind_address: str | None = None
    metrics_bind_address: str | None = None
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    percentage_of_nodes_to_score: Int32 | None = None
    pod_initial_backoff_seconds: Int64 = 1
    pod_max_backoff_seconds: Int64 = 10
    profiles: list[KubeSchedulerProfile] = Field(default_factory=list)
    extenders: list[Extender] = Field(default_factory=list)
    delay_cache_until_active: bool = False
    #: ``featureGates``: gate name -> on/off (kube-scheduler's ``--feature-gates``), see
    #: :mod:`kubesched.config.feature_gates`; unset gates keep their v1.35 defaults
    feature_gates: dict[str, bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_feature_gates(self) -> KubeSchedulerConfiguration:
        from kubesched.config.feature_gates import resolve

        resolve(self.feature_gates)
        return self

    @model_validator(mode="after")
    def _contention_follows_profiling(self) -> KubeSchedulerConfiguration:
        if "enable_contention_profiling" not in self.model_fields_set:
            self.enable_contention_profiling = self.enable_profiling
            self.model_fields_set.discard("enable_contention_profiling")  # still "not set by the user"
        return self

    def profile(self, scheduler_name: str) -> KubeSchedulerProfile:
        """The profile named ``scheduler_name``.

        Raises:
            KeyError: no such profile.
        """
        for prof in self.profiles:
            if prof.scheduler_name == scheduler_name:
                return prof
        raise KeyError(scheduler_name)
