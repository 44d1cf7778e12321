"""The summary of a run's held-out metrics, one row per model (what ``xlsent train`` prints after training)."""

from __future__ import annotations

from xlsent.data.sets.pairs import is_english


def summary_rows(metrics: dict) -> list[dict]:
    """One row per model of a run's metrics (``xlsent.metrics/2``), the parts each was scored on: retrieval P@1 named
    by direction to or from English where a side is known to be English (else src→tgt / tgt→src, never a guess),
    triplet accuracy, MSE, UDHR, span, tagging and multiple-choice figures — the summary table's rows."""
    rows = []
    for name, r in metrics["models"].items():
        row = {"model": name}
        if "retrieval" in r:
            ret = r["retrieval"]
            fwd, bwd = ret["src2tgt"]["p@1"], ret["tgt2src"]["p@1"]
            if is_english(ret.get("tgt_lang")) and not is_english(ret.get("src_lang")):
                row.update(x2en=fwd, en2x=bwd)
            elif is_english(ret.get("src_lang")):
                row.update(x2en=bwd, en2x=fwd)
            else:  # neither side known to be English: the directions as they are, never a guess
                row.update(s2t=fwd, t2s=bwd)
            row.update(triplet_cos=r["triplets"]["accuracy"]["cosine"]["accuracy"],
                       mse_tgt=r.get("mse", {}).get("mse_tgt_x100"))
        if "udhr" in r:
            row.update(udhr_x2en=r["udhr"]["mean"]["tgt2src"]["p@1"], udhr_en2x=r["udhr"]["mean"]["src2tgt"]["p@1"])
        if "spans" in r:
            row.update(span_en2x=r["spans"]["src2tgt"]["p@1"], span_x2en=r["spans"]["tgt2src"]["p@1"])
        row.update({k: v["value"] for k, v in r.get("tagging", {}).items() if k in ("micro_f1", "macro_f1", "accuracy")})
        if "choice" in r:
            row["choice_acc"] = r["choice"]["accuracy"]
        rows.append(row)
    return rows


#: each row's columns, as the summary table heads them
HEADS = {"x2en": "P@1 xx→en", "en2x": "P@1 en→xx", "s2t": "P@1 src→tgt", "t2s": "P@1 tgt→src",
         "triplet_cos": "triplet acc (cos)", "mse_tgt": "MSE×100 xx→T(en)", "udhr_x2en": "UDHR xx→en",
         "udhr_en2x": "UDHR en→xx", "span_en2x": "span P@1 en→xx", "span_x2en": "span P@1 xx→en",
         "micro_f1": "entity micro F1", "macro_f1": "entity macro F1", "accuracy": "accuracy", "choice_acc": "accuracy"}
