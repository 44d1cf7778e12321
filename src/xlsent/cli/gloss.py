"""``xlsent gloss``: word-by-word gloss of a file with a gloss model's (or any) bilingual dictionary."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.cli.common import console
from xlsent.data.formats.dictionary import UNKNOWN


def gloss_command(
    input: Path = typer.Option(..., "--input", "-i", help="text file, one sentence per line"),
    output: Path = typer.Option(..., "--output", "-o", help="glossed text, line by line"),
    model: Path = typer.Option(None, "--model", "-m", help="a model trained by 'xlsent train gloss'"),
    dictionary: Path = typer.Option(None, "--dictionary", "-d", help="or a word<TAB>translation TSV"),
    unknown: Literal[UNKNOWN] = typer.Option("keep", help="what becomes of a word missing from the dictionary"),
) -> None:
    """Replace every word found in the dictionary by its translation (paper 004's word mapping layer)."""
    from xlsent.api.models import gloss_file

    lines, entries = gloss_file(input, output, model=model, dictionary=dictionary, unknown=unknown)
    console.print(f"wrote {output} ({lines} lines, dictionary of {entries} entries)")
