"""The lightweight dual transformer (Mao et al. 2021): losses against their formulas, masking, the model folder."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from xlsent.losses.lightweight_losses import (align_loss, generative_targets, kl_loss, mask_pair, pad_batch,
                                              sim_loss)

V = 10  # a hand-made vocabulary: 0 pad, 1 unk, 2 <mask>, 3.. words; 9 is punctuation
MASK = 2
MASKABLE = [False, False, False, True, True, True, True, True, True, False]


def _q(pairs: dict[int, float]) -> torch.Tensor:
    q = torch.zeros(V)
    for k, v in pairs.items():
        q[k] = v
    return q


def test_ugt_targets_masked_and_unmasked_side():
    a, b = [3, 4, 5], [6, 7, 6, 8]  # b repeats 6
    a_in = [3, MASK, 5]  # w_t = 4 masked on side a
    qa, qb = generative_targets("ugt", a, b, a_in, b, V)
    # Eq. 4: ½ on w_t + N_w / (2|S'|) over the other side's tokens (6 occurs twice)
    torch.testing.assert_close(qa, _q({4: 0.5, 6: 2 / 8, 7: 1 / 8, 8: 1 / 8}))
    # Eq. 3 on the unmasked side: N_w / |S| over the masked side's original tokens
    torch.testing.assert_close(qb, _q({3: 1 / 3, 4: 1 / 3, 5: 1 / 3}))
    # the mask on side b instead: symmetric
    qa2, qb2 = generative_targets("ugt", a, b, a, [6, 7, MASK, 8], V)
    torch.testing.assert_close(qb2, _q({6: 0.5, 3: 1 / 6, 4: 1 / 6, 5: 1 / 6}))  # w_t = 6 (its second occurrence)
    torch.testing.assert_close(qa2, _q({6: 0.5, 7: 0.25, 8: 0.25}))


def test_ugt_targets_the_codes_variants():
    a, b = [3, 4, 5], [6, 7, 6, 4]  # w_t = 4 also occurs on the other side
    a_in = [3, MASK, 5]
    # the code: ids set (not summed), the ½ of w_t overwritten last, no renormalisation
    qa, qb = generative_targets("ugt", a, b, a_in, b, V, repeats="set", targets_from="masked", renormalise=False)
    torch.testing.assert_close(qa, _q({6: 1 / 8, 7: 1 / 8, 4: 0.5}))  # sums to 0.75
    torch.testing.assert_close(qb, _q({3: 1 / 3, MASK: 1 / 3, 5: 1 / 3}))  # <mask> gets mass, w_t none
    qa_r, _ = generative_targets("ugt", a, b, a_in, b, V, repeats="set", renormalise=True)
    assert float(qa_r.sum()) == pytest.approx(1.0)


def test_other_generative_tasks():
    a, b = [3, 4, 5], [6, 7]
    qa, qb = generative_targets("xtr", a, b, a, b, V)
    torch.testing.assert_close(qa, _q({6: 0.5, 7: 0.5}))
    torch.testing.assert_close(qb, _q({3: 1 / 3, 4: 1 / 3, 5: 1 / 3}))
    qa, qb = generative_targets("smlm", a, b, [3, 4, MASK], b, V)  # both sides predict w_t = 5 (Eq. 1)
    torch.testing.assert_close(qa, _q({5: 1.0}))
    torch.testing.assert_close(qb, _q({5: 1.0}))
    qa, qb = generative_targets("mlm", a, b, [MASK, 4, MASK], [6, MASK], V)
    torch.testing.assert_close(qa, _q({3: 0.5, 5: 0.5}))
    torch.testing.assert_close(qb, _q({7: 1.0}))
    qa, _ = generative_targets("mlm+xtr", a, b, [MASK, 4, 5], [6, MASK], V)
    torch.testing.assert_close(qa, _q({3: 0.5, 6: 0.25, 7: 0.25}))


def test_kl_loss_is_kl_of_target_to_prediction():
    log_p = torch.log_softmax(torch.tensor([[0.1, 2.0, -1.0, 0.5]]), dim=-1)
    q = torch.tensor([[0.0, 0.5, 0.25, 0.25]])
    expected = sum(float(q[0, i]) * (math.log(float(q[0, i])) - float(log_p[0, i])) for i in range(4) if q[0, i] > 0)
    assert float(kl_loss(log_p, q)) == pytest.approx(expected, rel=1e-6)
    assert float(kl_loss(log_p, torch.zeros_like(q))) == 0.0  # no target: no loss


def test_align_loss_matches_eq5_and_favours_the_diagonal():
    u = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    v = torch.tensor([[0.5, 0.1], [0.2, 1.0], [0.3, 0.3]])
    s = (u @ v.T).numpy()
    rows = -np.mean([s[j, j] - np.log(np.exp(s[j]).sum()) for j in range(3)])
    cols = -np.mean([s[j, j] - np.log(np.exp(s[:, j]).sum()) for j in range(3)])
    assert float(align_loss(u, v)) == pytest.approx(rows + cols, rel=1e-5)
    big = torch.eye(3) * 10
    assert float(align_loss(big, big)) < 1e-3  # translations far apart from the rest: ~0


def test_sim_loss_is_zero_when_both_similarity_matrices_agree():
    u = torch.randn(4, 3)
    assert float(sim_loss(u, u.clone())) == pytest.approx(0.0, abs=1e-6)
    v = torch.randn(4, 3)
    p1, p2 = torch.softmax(u @ u.T, 1), torch.softmax(v @ v.T, 1)
    expected = float(-torch.log(torch.cos(math.pi / 2 * (p1 - p2))).sum())
    assert float(sim_loss(u, v)) == pytest.approx(expected, rel=1e-5)
    assert float(sim_loss(u, v, "mean")) == pytest.approx(expected / 16, rel=1e-5)


def test_masking_picks_exactly_one_non_punctuation_token():
    gen = torch.Generator().manual_seed(0)
    sides = set()
    for _ in range(200):
        a, b = [3, 9, 4, 9], [9, 5, 6]
        a_in, b_in = mask_pair("ugt", a, b, MASKABLE, MASK, gen)
        changed = [(s, i) for s, (x, y) in enumerate(((a, a_in), (b, b_in))) for i in range(len(x)) if x[i] != y[i]]
        assert len(changed) == 1
        s, i = changed[0]
        assert (a, b)[s][i] != 9 and (a_in, b_in)[s][i] == MASK  # never punctuation
        sides.add(s)
    assert sides == {0, 1}  # both sides get masked (p = ½)
    a_in, b_in = mask_pair("ugt", [9, 9], [5], MASKABLE, MASK, gen)  # a side without a maskable token
    assert a_in == [9, 9] and b_in == [MASK]
    assert mask_pair("xtr", [3, 4], [5], MASKABLE, MASK, gen) == ([3, 4], [5])
    a_in, _ = mask_pair("mlm", list(range(3, 9)) * 2, [5], MASKABLE, MASK, gen)
    assert a_in.count(MASK) == 2  # 15% of 12 maskable tokens


def test_pad_batch():
    out = pad_batch([[3, 4], [5]])
    assert out["input_ids"].tolist() == [[3, 4], [5, 0]] and out["attention_mask"].tolist() == [[1, 1], [1, 0]]


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    import random

    from conftest import WORDS

    rng = random.Random(4)
    en, ny = WORDS[:12], WORDS[13:25]
    mapping = dict(zip(en, ny))
    rows = set()
    while len(rows) < 160:
        s = [rng.choice(en) for _ in range(rng.randint(4, 8))]
        rows.add((" ".join(s) + ".", " ".join(mapping[w] for w in s) + "."))
    path = tmp_path_factory.mktemp("lw") / "pairs.tsv"
    path.write_text("en\tny\n" + "".join(f"{a}\t{b}\n" for a, b in sorted(rows)), encoding="utf-8")
    return path


TINY = ["encoder.hidden=32", "encoder.heads=2", "encoder.ffn=64", "tokenizer.vocab_size=120", "optim.batch_size=16",
        "models.reference=", "eval.sample=0", "models.max_seq_length=32"]


def test_trains_learns_and_loads_in_a_fresh_process(pairs_file, tmp_path):
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.config import load_config
    from xlsent.recipes.lightweight import train_lightweight

    cfg = load_config("lightweight", overrides=[*TINY, f"train.pairs={pairs_file}", f"eval.pairs={pairs_file}",
                                                "optim.epochs=15", "optim.decay_epoch=0", "optim.lr=3e-3"])
    notes = []
    path = train_lightweight(cfg, tmp_path / "run", on_note=notes.append, progress=False).model_path
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert {"generative", "align", "sim", "loss"} <= log[0].keys()
    first, last = np.mean([e["loss"] for e in log[:2]]), np.mean([e["loss"] for e in log[-2:]])
    assert last < 0.7 * first, (first, last)
    assert any("pieces learned" in n for n in notes)

    texts = ["mulungu ndi wabwino", "god is good.", "madzi"]
    here = SentenceTransformer(str(path), device="cpu").encode(texts)
    code = ("import json; from sentence_transformers import SentenceTransformer; "
            f"m = SentenceTransformer({str(path)!r}, device='cpu'); print(json.dumps(m.encode({texts!r}).tolist()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    np.testing.assert_allclose(np.array(json.loads(out.stdout.strip().splitlines()[-1])), here, atol=1e-6)
    config = json.loads((path / "config.json").read_text())
    assert config["architectures"] == ["BertModel"] and config["num_hidden_layers"] == 2 and config["hidden_act"] == "silu"
    assert "auto_map" not in config  # no remote code

    # retrieval on the training pairs: the model learned the word mapping (chance would be 1/160)
    from xlsent.data.pairs import load_pairs

    ds = load_pairs(str(pairs_file)).dataset
    m = SentenceTransformer(str(path), device="cpu")
    a, b = m.encode(list(ds["src"]), normalize_embeddings=True), m.encode(list(ds["tgt"]), normalize_embeddings=True)
    assert (np.argmax(a @ b.T, 1) == np.arange(len(a))).mean() > 0.2


def test_bad_values_fail_before_training():
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    for bad, message in (("loss.task=mlm2", "loss.task='mlm2': not an allowed value"),
                         ("encoder.heads=5", "not divisible by encoder.heads=5"),
                         ("tokenizer.vocab_size=0", "tokenizer.vocab_size=0: must be ≥ 1"),
                         ("loss.mlm_rate=1.5", "loss.mlm_rate=1.5: must lie in [0, 1)")):
        with pytest.raises(XlsentError, match=message.replace("(", r"\(").replace("[", r"\[").replace(")", r"\)")):
            load_config("lightweight", overrides=[bad])


def test_ablation_variants_are_valid_configs_that_flip_their_switch():
    """benchmarks/distillation/lightweight_ablations.py: each variant's --set keys parse on the small preset and
    change exactly the Table 5/6/7 switch it names (the shared budget aside)."""
    from pathlib import Path

    from xlsent.recipes.config import load_config

    before = list(sys.path)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "distillation"))
    try:
        import lightweight_ablations as abl  # it puts benchmarks/ (its _ablation helper) on the path itself
    finally:
        sys.path[:] = before
    base = load_config("lightweight", overrides=abl.overrides([], 2), preset="small")
    assert (base.optim.epochs, base.optim.decay_epoch, base.models.reference) == (2, 0, "")
    names = set()
    for name, _tables, sets in abl.VARIANTS:
        cfg = load_config("lightweight", overrides=abl.overrides(sets, 2), preset="small")
        changed = {f"{sec}.{k}" for sec in ("loss", "encoder") for k, v in cfg[sec].items() if base[sec][k] != v}
        assert changed == {s.split("=")[0] for s in sets}, name
        names.add(abl.slug(name))
    assert len(names) == len(abl.VARIANTS)  # one folder each
