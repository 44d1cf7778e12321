"""What the tokenizer changes of this package share: the word-start mark of a Unigram model's pieces, and a fast
tokenizer rebuilt around an edited ``tokenizer.json``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

WORD_START = "▁"


def tokenizer_with(tok, tokenizer_json: dict):
    """A fast Hugging Face tokenizer like ``tok`` (its settings and special tokens) with ``tokenizer_json`` as its
    ``tokenizer.json``."""
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        tok.save_pretrained(tmp)
        Path(tmp, "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False), encoding="utf-8")
        return AutoTokenizer.from_pretrained(tmp, local_files_only=True)

