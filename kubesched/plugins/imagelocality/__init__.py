"""The ImageLocality plugin (``pkg/scheduler/framework/plugins/imagelocality``)."""
