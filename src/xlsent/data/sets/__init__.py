"""Datasets by name: the bundled sets (bundled.py), the one registry of every bundled name (registry.py), pairs
for training and evaluation from a name or a file (pairs.py), several languages in one training set (mixing.py)
and corpus statistics (stats.py)."""
