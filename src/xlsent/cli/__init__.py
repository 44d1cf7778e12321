"""The ``xlsent`` command line (typer + rich)."""
