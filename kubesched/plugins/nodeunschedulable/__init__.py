"""The NodeUnschedulable plugin (``pkg/scheduler/framework/plugins/nodeunschedulable``)."""
