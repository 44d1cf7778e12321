"""Small shared helpers: user-facing errors, atomic file writes, cache paths."""
