"""Test-time perturbations of Manafi (2025, §3.1.2): P1–P5 and a random control, and overlap measures."""
