"""Filters of parallel pairs, each counted: cleaning (cleaning.py: normalisation, empty, length, pattern,
duplicates), the noise of mined and aligned pairs (noise_filters.py: language, script, ratio, numbers …) and the
candidate-pair filter that keeps the best N (pair_filter.py)."""
