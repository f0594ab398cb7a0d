"""The PrioritySort plugin (``pkg/scheduler/framework/plugins/queuesort``)."""
