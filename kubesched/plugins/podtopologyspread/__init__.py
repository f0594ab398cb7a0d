"""The PodTopologySpread plugin (``pkg/scheduler/framework/plugins/podtopologyspread``)."""
