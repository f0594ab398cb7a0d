"""The NodeAffinity plugin (``pkg/scheduler/framework/plugins/nodeaffinity``)."""
