"""Training material derived from parallel pairs: triplets (triplets.py), negatives (negatives.py), silver tags
projected through word alignments (projection.py) and structural words (structural.py)."""
