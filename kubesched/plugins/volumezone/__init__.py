"""The VolumeZone plugin (``pkg/scheduler/framework/plugins/volumezone``)."""
