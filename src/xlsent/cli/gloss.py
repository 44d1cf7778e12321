"""``xlsent gloss``: word-by-word gloss of a file with a gloss model's (or any) bilingual dictionary."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api._common import writes
from xlsent.cli.common import console, output_file
from xlsent.data.formats.dictionary import UNKNOWN
from xlsent.data.formats.readers import read_lines
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_text_atomic


@writes("output")
def gloss_command(
    input: Path = typer.Option(..., "--input", "-i", help="text file, one sentence per line"),
    output: Path = typer.Option(..., "--output", "-o", help="glossed text, line by line"),
    model: Path = typer.Option(None, "--model", "-m", help="a model trained by 'xlsent train gloss'"),
    dictionary: Path = typer.Option(None, "--dictionary", "-d", help="or a word<TAB>translation TSV"),
    unknown: Literal[UNKNOWN] = typer.Option("keep", help="what becomes of a word missing from the dictionary"),
) -> None:
    """Replace every word found in the dictionary by its translation (paper 004's word mapping layer)."""
    from xlsent.data.formats.dictionary import BilingualDictionary
    from xlsent.models.gloss import load_gloss

    output_file(output)
    if bool(model) == bool(dictionary):
        raise XlsentError("give exactly one of --model GLOSS_MODEL or --dictionary FILE.tsv")
    if dictionary:
        d = BilingualDictionary.from_tsv(dictionary)
    else:
        g = load_gloss(model)
        d = g.dictionary if g is not None else None
    if d is None:
        raise XlsentError(f"{model}: not a gloss model (no xlsent_gloss.json) — train one with 'xlsent train gloss'")
    lines = read_lines(input)
    write_text_atomic(output, "".join(d.gloss(t, unknown) + "\n" for t in lines))
    console.print(f"wrote {output} ({len(lines)} lines, dictionary of {len(d)} entries)")
