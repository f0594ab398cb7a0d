"""The InterPodAffinity plugin (``pkg/scheduler/framework/plugins/interpodaffinity``)."""
