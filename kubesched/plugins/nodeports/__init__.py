"""The NodePorts plugin (``pkg/scheduler/framework/plugins/nodeports``)."""
