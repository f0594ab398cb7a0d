"""Image pre-pulling: the planner hook protocol (``hook``) and ``PrePullPlanner`` (``planner``)."""
