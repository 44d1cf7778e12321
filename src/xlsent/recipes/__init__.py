"""Training recipes, one method per file, each citing its paper."""
