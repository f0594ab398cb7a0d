"""The ImagePullTimeSaved plugin (kubesched's own; no upstream counterpart)."""
