"""The NodeVolumeLimits plugin (``pkg/scheduler/framework/plugins/nodevolumelimits``)."""
