"""The VolumeBinding plugin (``pkg/scheduler/framework/plugins/volumebinding``)."""
