"""The desktop inspector (PySide6 on a qasync loop). Knows Qt and the core's async API; never runs SQL itself."""
