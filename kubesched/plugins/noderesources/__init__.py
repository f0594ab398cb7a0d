"""The NodeResourcesFit and NodeResourcesBalancedAllocation plugins and their shared resource-allocation
scoring (``pkg/scheduler/framework/plugins/noderesources``)."""
