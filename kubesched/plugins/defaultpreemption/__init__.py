"""The DefaultPreemption plugin (``pkg/scheduler/framework/plugins/defaultpreemption``)."""
