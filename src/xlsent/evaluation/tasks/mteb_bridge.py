"""MTEB itself: MTEB task objects over xlsent's offline data (:func:`mteb_tasks`), for ``mteb.evaluate``. MTEB is an
extra, imported only when they are made."""

from __future__ import annotations

import typing
from typing import Any, Mapping, Sequence

from xlsent.evaluation.tasks.registry import expand
from xlsent.evaluation.tasks.runner import build
from xlsent.utils.errors import XlsentError


def mteb_tasks(task_names: str | Sequence[str], options: Mapping[str, Any] | None = None) -> list:
    """MTEB task objects over xlsent's offline data, for ``mteb.evaluate(model, tasks=…)``: the ``retrieval``
    tasks as ``BitextMining`` (one subset per language pair), the ``sts`` tasks as ``STS``. Their main score is
    MTEB's own for the type (``f1``, ``cosine_spearman``), the one xlsent writes as ``main_score`` in MTEB's
    format. Needs ``pip install 'xlsent[mteb]'``."""
    try:
        from datasets import Dataset, DatasetDict
        from mteb.abstasks.task_metadata import TaskMetadata
        from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
        from mteb.abstasks.sts import AbsTaskSTS
    except ImportError as e:
        raise XlsentError(f"mteb is not installed ({e}): pip install 'xlsent[mteb]'") from None

    out = []
    for task in build(expand(task_names), options):
        d, cls = task.declaration, type(task)
        if not cls.mteb_type:
            raise XlsentError(f"task {d.name}: MTEB has no task type with this protocol ({cls.measures}) — it "
                              "runs in xlsent only (xlsent eval run writes its result in MTEB's format)")
        langs, data = task.mteb_data(Dataset, DatasetDict)
        base = {"BitextMining": AbsTaskBitextMining, "STS": AbsTaskSTS}[cls.mteb_type]
        metadata = TaskMetadata(
            name=d.mteb_name, dataset={"path": f"xlsent/{d.dataset}", "revision": "bundled"},
            description=d.description, type=typing.cast(Any, cls.mteb_type), category="t2t", modalities=["text"],
            eval_splits=list(d.splits[:1]), eval_langs=langs if len(langs) > 1 else next(iter(langs.values())),
            main_score=cls.mteb_main_score or cls.main_score, license="not specified",
            annotations_creators="human-annotated", sample_creation="found", bibtex_citation="", reference=None,
            domains=["Written"], task_subtypes=[], dialect=[], date=None)
        out.append(_mteb_task(base, metadata, data, len(langs) > 1))
    return out


def _mteb_task(base: type, metadata: Any, data: dict, multilingual: bool) -> Any:
    extra = {"min_score": 0, "max_score": 5} if base.__name__ == "AbsTaskSTS" else {}

    class XlsentTask(base):  # type: ignore[misc, valid-type]
        def load_data(self, **kwargs: Any) -> None:
            self.dataset = data if multilingual else data["default"]
            self.data_loaded = True

    XlsentTask.metadata = metadata
    for k, v in extra.items():
        setattr(XlsentTask, k, v)
    XlsentTask.__name__ = XlsentTask.__qualname__ = metadata.name.replace(".", "_").replace("-", "_")
    return XlsentTask()
