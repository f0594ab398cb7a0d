"""The TaintToleration plugin (``pkg/scheduler/framework/plugins/tainttoleration``)."""
