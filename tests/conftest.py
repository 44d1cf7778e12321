"""Shared fixtures: a tiny randomly-initialised BERT sentence-transformer built in the test, and an isolated cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Rich reads COLUMNS once, when the CLI's consoles are made (on the first import of xlsent.cli): set before any test
# imports it, so that which test runs first on a worker (pytest-xdist) cannot wrap the CLI's lines at 80 columns.
os.environ.setdefault("COLUMNS", "200")
# pytest-xdist runs one worker a core (at most 4, addopts): each worker's torch (and the processes a test starts)
# gets its share of the cores it may use, not all of them — two workers of two threads each on two cores spend their
# time waiting on each other. Set before torch is imported; a user's own OMP_NUM_THREADS wins.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    _share = str(max(1, _cores // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    os.environ.setdefault("OMP_NUM_THREADS", _share)
    os.environ.setdefault("MKL_NUM_THREADS", _share)

# bf16 on the CPU is decided by timing it (xlsent.utils.cpu_bf16): the suite runs in fp32 on every CPU, so that its
# figures and tolerances do not depend on the machine; tests of bf16 ask for it (tests/test_cpu_bf16.py unsets this).
os.environ.setdefault("XLSENT_CPU_BF16", "0")

def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set, as CI services set it and ``.ci/run`` does)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need(module: str):
    """``import module`` for a test that needs a package of the ``[test]`` extra (mypy, ray, mteb, eflomal, build,
    twine …). Where it is missing the test is skipped, saying so — in a developer's own environment; under CI, which
    installs ``.[test]`` (``.ci/run``), a missing one is a broken install and the test fails instead of passing
    as a skip. Works at a module's top level too."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        why = f"{module} cannot be imported ({exc}): pip install -e '.[test]'"
        if in_ci():
            pytest.fail(f"{why} — CI installs the [test] extra, so this is a broken install", pytrace=False)
        pytest.skip(why, allow_module_level=True)


WORDS = (
    "god is good the river is wide water light earth heaven mulungu ndi wabwino mtsinje madzi kuwala dziko "
    "kumwamba and of in a to he she they we you it was were be have has said unto lord chala nyumba"
).split()


#: the longest tests of a CI run (``.ci/run``: 2 cores, 2 workers; seconds from its ``--durations``), by node id, test
#: (the id before ``[``) or file: under pytest-xdist they start first (:func:`pytest_collection_modifyitems`)
LONGEST = {
    "tests/test_train_bootstrap.py::test_bootstrap_on_the_default_model_finds_true_pairs": 75,
    "tests/test_wheel.py::test_installed_wheel_runs_from_an_empty_folder": 74,
    "tests/test_api.py::test_docstring_examples_run_on_the_real_model[training]": 53,
    "tests/test_tasks.py::test_mteb_and_xlsent_agree_on_the_real_model": 36,
    "tests/test_default_model.py::test_the_automatic_mining_cut_stays_near_the_best_cut_on_a_bundled_corpus": 35,
    "tests/test_api.py::test_docstring_examples_run_on_the_real_model[exporting]": 30,
    "tests/test_api.py::test_docstring_examples_run_on_the_real_model[models]": 27,
    "tests/test_api.py::test_docstring_examples_run_on_the_real_model[evaluation]": 23,
    "tests/test_ddp.py": 18,
    "tests/test_resume.py::test_sigkill_mid_stage_resumes_to_the_uninterrupted_model": 17,
}


def _expected_seconds(item) -> float:
    node = item.nodeid
    for key in (node, node.split("[", 1)[0], node.split("::", 1)[0]):
        if key in LONGEST:
            return LONGEST[key]
    return 10.0 if item.get_closest_marker("slow") else 0.0


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, the long tests (:data:`LONGEST`, else the slow marker) start first, dealt between the
    workers: xdist's worksteal hands each worker a contiguous share of this order (the first ``n // workers``, then
    the next …) and an idle one steals from the end of another's. Each share opens with its part of the long tests
    (longest first, each given to the share with the least long work so far), then short ones in the files' order —
    so no long test starts late and the workers finish together. A run in one process (``-n 0``) keeps the files'
    order; every worker computes the same order from the same collection, as xdist requires."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if not os.environ.get("PYTEST_XDIST_WORKER") or workers < 2:
        return
    seconds = [_expected_seconds(item) for item in items]
    long = sorted((i for i in range(len(items)) if seconds[i]), key=lambda i: -seconds[i])  # stable
    short = [i for i in range(len(items)) if not seconds[i]]
    shares, load = [[] for _ in range(workers)], [0.0] * workers
    for i in long:
        w = load.index(min(load))
        shares[w].append(i)
        load[w] += seconds[i]
    order, left = [], len(items)
    for w in range(workers):  # xdist's first hand-out: worker w gets left // (workers - w) of what is left
        size = left // (workers - w)
        take = max(0, size - len(shares[w]))
        order += shares[w] + short[:take]
        short = short[take:]
        left -= size
    items[:] = [items[i] for i in order + short]


_THREADS: list[int] = []  # torch's own thread count, as first seen


@pytest.fixture(autouse=True)
def _torch_threads():
    """Each test ends with torch's thread count as it found it: a test that sets it (an engine worker, --threads 1)
    would otherwise change the numerics of every test after it (a toy training run's trajectory with them)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and not _THREADS:
        _THREADS.append(torch.get_num_threads())
    found = torch.get_num_threads() if torch is not None else (_THREADS[0] if _THREADS else None)
    yield
    torch = sys.modules.get("torch")
    if torch is not None and found is not None and torch.get_num_threads() != found:
        torch.set_num_threads(found)


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("xlsent-cache")
    old = os.environ.get("XLSENT_CACHE_DIR")
    os.environ["XLSENT_CACHE_DIR"] = str(cache)
    if os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("XLSENT_TEST_MODEL_CACHE"):
        # the run's workers share one models/ folder: e5-small is rebuilt once a run, not once a worker (the
        # registry's file lock lets one worker build while the others wait); the rest of the cache stays the worker's
        shared = tmp_path_factory.getbasetemp().parent / "shared-models"
        shared.mkdir(exist_ok=True)
        os.symlink(shared, cache / "models")
    elif os.environ.get("XLSENT_TEST_MODEL_CACHE"):
        # reuse a prepared e5-small between test runs (local convenience only)
        (cache / "models").mkdir(exist_ok=True)
        src = Path(os.environ["XLSENT_TEST_MODEL_CACHE"])
        if src.exists():
            os.symlink(src, cache / "models" / "e5-small")
    yield cache
    if old is None:
        os.environ.pop("XLSENT_CACHE_DIR", None)
    else:
        os.environ["XLSENT_CACHE_DIR"] = old


def build_tiny_model(path: Path, layers: int = 3, hidden: int = 32, seed: int = 0, prompt: str = "",
                     dropout: float = 0.1) -> Path:
    """A random BERT (WordLevel tokenizer over WORDS) saved as Transformer → mean Pooling → Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate(specials + sorted(set(WORDS)) + list(".,:?!"))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=64,
    )
    cfg = BertConfig(
        vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=2 * hidden, max_position_embeddings=64, hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    hf_dir = path.parent / (path.name + "-hf")
    BertModel(cfg, add_pooling_layer=False).save_pretrained(hf_dir)
    hf_tok.save_pretrained(hf_dir)
    tr = Transformer(str(hf_dir), max_seq_length=64)
    prompts = {"passage": prompt} if prompt else None
    st = SentenceTransformer(
        modules=[tr, Pooling(hidden, pooling_mode="mean"), Normalize()], device="cpu",
        prompts=prompts, default_prompt_name="passage" if prompt else None,
    )
    st.save(str(path))
    return path


@pytest.fixture(scope="session")
def make_tiny_model():
    """:func:`build_tiny_model` as a fixture, for test modules that need their own variant."""
    return build_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def pairs_tsv(tmp_path) -> Path:
    """40 toy en–ny pairs (distinct texts) in TSV with a language header."""
    import random

    rng = random.Random(0)
    en = [w for w in WORDS[:12]]
    ny = [w for w in WORDS[13:22]]
    rows, seen = [], set()
    while len(rows) < 40:
        a = " ".join(rng.choice(en) for _ in range(6))
        b = " ".join(rng.choice(ny) for _ in range(6))
        if a in seen:
            continue
        seen.add(a)
        rows.append(f"{a}\t{b}")
    p = tmp_path / "pairs.tsv"
    p.write_text("en\tny\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return p
