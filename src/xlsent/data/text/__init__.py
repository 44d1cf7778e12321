"""Text tools: sentence splitting for many scripts (splitting.py), stop words (stopwords.py) and the substitute
scripts of a language (transliterate.py)."""
