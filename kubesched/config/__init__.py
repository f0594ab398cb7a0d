"""``KubeSchedulerConfiguration`` v1: models, defaults, loading, validation and plugin-args decoding."""

from kubesched.config.args import ARGS_CONFIG, decode_args, decode_plugin_args, plugin_args
from kubesched.config.defaults import (
    DEFAULT_MULTI_POINT,
    DEFAULT_SCHEDULER_NAME,
    apply_defaults,
    default_plugins,
    default_profile,
    merge_plugin_set,
    merge_plugins,
)
from kubesched.config.duration import GoDuration, format_go_duration, parse_go_duration
from kubesched.config.extenders import extender_ignored_resources, ordered_extenders
from kubesched.config.load import default_config, dump_config, load_config, parse_config
from kubesched.config.types import (
    API_VERSION,
    EXTENSION_POINTS,
    KIND,
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from kubesched.config.validation import REMOVED_PLUGINS, validate_config, validation_errors

__all__ = [
    "API_VERSION",
    "ARGS_CONFIG",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "REMOVED_PLUGINS",
    "ClientConnectionConfiguration",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "GoDuration",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "apply_defaults",
    "decode_args",
    "decode_plugin_args",
    "default_config",
    "default_plugins",
    "default_profile",
    "dump_config",
    "extender_ignored_resources",
    "format_go_duration",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "ordered_extenders",
    "parse_config",
    "parse_go_duration",
    "plugin_args",
    "validate_config",
    "validation_errors",
]
