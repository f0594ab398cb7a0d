"""The ImageCacheWait plugin (kubesched's own; no upstream counterpart)."""
