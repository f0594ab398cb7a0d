"""The DefaultBinder plugin (``pkg/scheduler/framework/plugins/defaultbinder``)."""
