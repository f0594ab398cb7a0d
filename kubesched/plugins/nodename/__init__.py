"""The NodeName plugin (``pkg/scheduler/framework/plugins/nodename``)."""
