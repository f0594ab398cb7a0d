"""The VolumeRestrictions plugin (``pkg/scheduler/framework/plugins/volumerestrictions``)."""
