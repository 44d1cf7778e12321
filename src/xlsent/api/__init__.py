"""The public Python API: what every ``xlsent`` command calls, importable as ``xlsent.NAME``."""
