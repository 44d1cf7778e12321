"""One entry point for ``--pairs FILE`` / ``--dataset NAME``: read, then clean with counts."""

from __future__ import annotations

from dataclasses import dataclass, field

from xlsent.data.bundled import is_bundled, load_bundled
from xlsent.data.cleaning import CleanReport, clean_pairs
from xlsent.data.readers import read_pairs


@dataclass
class LoadedPairs:
    dataset: object
    source: str
    read_notes: list[str] = field(default_factory=list)
    clean: CleanReport | None = None

    def notes(self) -> list[str]:
        out = list(self.read_notes)
        if self.clean:
            out += [f"{self.source}: filter {n} removed {r} ({w})" for n, r, w in self.clean.steps]
        return out


def load_pairs(
    spec: str,
    on_bad_lines: str = "error",
    min_words: int | None = None,
    max_words: int | None = None,
    special_pattern: str | None = None,
    dedupe: bool = True,
    sample: int = 0,
    seed: int = 0,
) -> LoadedPairs:
    """Read a dataset name or pairs file, clean it (every filter counted), optionally sample ``sample`` pairs."""
    if is_bundled(spec):
        ds, notes = load_bundled(spec), []
    else:
        ds, report = read_pairs(spec, on_bad_lines)
        notes = report.lines()
    ds, clean = clean_pairs(ds, min_words=min_words or None, max_words=max_words or None,
                            special_pattern=special_pattern or None, dedupe=dedupe)
    if sample and sample < len(ds):
        ds = ds.shuffle(seed=seed).select(range(sample))
        notes.append(f"{spec}: sampled {sample} of {clean.rows_out} cleaned pairs (seed {seed})")
    return LoadedPairs(ds, spec, notes, clean)
