"""Run reports: plots (matplotlib) and self-contained HTML."""
