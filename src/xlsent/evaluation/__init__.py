"""Evaluations: retrieval (P@k both directions, margin, ties, bootstrap CIs)."""
