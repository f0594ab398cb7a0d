"""Pieces shared by several in-tree plugins (``pkg/scheduler/framework/plugins/helper``).
A plugin package may import from here, never from another plugin package."""
