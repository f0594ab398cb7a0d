"""The SchedulingGates plugin (``pkg/scheduler/framework/plugins/schedulinggates``)."""
