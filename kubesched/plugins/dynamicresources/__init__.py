"""The DynamicResources plugin (``pkg/scheduler/framework/plugins/dynamicresources``)."""
