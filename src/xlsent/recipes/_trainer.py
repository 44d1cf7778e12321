"""Shared training plumbing for the distillation recipes: sentence-transformers' trainer, configured
from a recipe's ``optim`` section, with resumable checkpoints and an atomically written model.

Optimiser (the published multi-stage code, Ding et al. 2022, and Hugging Face defaults):
AdamW with ε = ``adam_epsilon``, weight decay on every weight except biases and LayerNorm,
a linear schedule with ``warmup_ratio`` warm-up, gradient clipping at ``max_grad_norm``.

Resume: the trainer checkpoints into ``<stage>/checkpoints`` every ``save_steps`` steps; a rerun
with the same stage config resumes from the newest one. The finished model is written to
``<stage>/model`` atomically, then ``<stage>/stage.json`` marks the stage done (see
:func:`stage_done`); a rerun skips a finished stage whose config has not changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

from xlsent.utils.io import atomic_path, write_json_atomic, write_text_atomic


def config_hash(*parts) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def stage_done(stage_dir: Path, chash: str) -> dict | None:
    """The stage's record if it finished with this config hash, else None."""
    marker = stage_dir / "stage.json"
    if (stage_dir / "model" / "modules.json").exists() and marker.exists():
        rec = json.loads(marker.read_text())
        if rec.get("config_hash") == chash:
            return rec
    return None


def skip_if_done(stage_dir: Path, chash: str, console=None) -> bool:
    """True (and say so) when ``stage_dir`` holds a finished model trained with this config."""
    if stage_done(Path(stage_dir), chash):
        if console is not None:
            console.print(f"{Path(stage_dir).name}: finished earlier with this config — skipping")
        return True
    return False


def _latest_checkpoint(folder: Path, chash: str) -> str | None:
    if not folder.exists():
        return None
    tag = folder / "config_hash.txt"
    if not tag.exists() or tag.read_text().strip() != chash:
        shutil.rmtree(folder, ignore_errors=True)  # another config's checkpoints: start afresh
        return None
    cks = sorted(folder.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    cks = [c for c in cks if (c / "trainer_state.json").exists()]
    return str(cks[-1]) if cks else None


def training_prompt(model) -> str | None:
    """The model's default prompt (e5: ``"passage: "``), so training texts look like those it encodes.

    sentence-transformers' trainer adds a prompt only when told to (``args.prompts``), while
    ``encode`` adds the default one: without this, a student would learn on bare text, be
    scored against targets encoded with the prompt, and then be used with the prompt.
    """
    name = getattr(model, "default_prompt_name", None)
    return (getattr(model, "prompts", None) or {}).get(name) if name else None


def train_stage(
    model,
    train_dataset,
    loss,
    optim: dict,
    stage_dir: Path,
    chash: str,
    console=None,
    progress: bool = True,
    name: str = "training",
    no_duplicates: bool = False,
    extra_record: dict | None = None,
    callbacks: list | None = None,
) -> dict:
    """Train ``model`` on ``train_dataset`` with ``loss``; save ``stage_dir/model`` atomically; return the stage record."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    stage_dir = Path(stage_dir)
    stage_dir.mkdir(parents=True, exist_ok=True)
    ck_dir = stage_dir / "checkpoints"
    resume = _latest_checkpoint(ck_dir, chash)
    ck_dir.mkdir(exist_ok=True)
    (ck_dir / "config_hash.txt").write_text(chash)
    if console is not None:
        console.print(f"[bold]{name}[/bold]: {len(train_dataset)} examples"
                      + (f" — resuming from {resume}" if resume else ""))
    args = SentenceTransformerTrainingArguments(
        output_dir=str(ck_dir),
        num_train_epochs=float(optim["epochs"]),
        max_steps=int(optim.get("max_steps", 0) or -1),
        per_device_train_batch_size=int(optim["batch_size"]),
        learning_rate=float(optim["lr"]),
        warmup_steps=float(optim.get("warmup_ratio", 0.1)),  # a float < 1 is a ratio in transformers 5
        weight_decay=float(optim.get("weight_decay", 0.01)),
        adam_epsilon=float(optim.get("adam_epsilon", 1e-6)),
        max_grad_norm=float(optim.get("max_grad_norm", 1.0)),
        lr_scheduler_type="linear",
        seed=int(optim.get("seed", 0)),
        save_strategy="steps",
        save_steps=int(optim.get("save_steps", 200)),
        save_total_limit=1,
        logging_steps=int(optim.get("logging_steps", 10)),
        logging_first_step=True,
        report_to="none",
        disable_tqdm=not progress,
        use_cpu=True,
        dataloader_num_workers=0,
        batch_sampler=BatchSamplers.NO_DUPLICATES if no_duplicates else BatchSamplers.BATCH_SAMPLER,
        prompts=training_prompt(model),
    )
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss, callbacks=callbacks)
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume)
    seconds = time.perf_counter() - t0
    log = [e for e in trainer.state.log_history if "loss" in e or "train_loss" in e]
    with atomic_path(stage_dir / "model") as tmp:
        model.save(str(tmp))
    write_text_atomic(stage_dir / "train_log.jsonl", "".join(json.dumps(e) + "\n" for e in log))
    record = {"config_hash": chash, "seconds": seconds, "steps": trainer.state.global_step,
              "examples": len(train_dataset), "final_loss": next((e["loss"] for e in reversed(log) if "loss" in e), None),
              **(extra_record or {})}
    write_json_atomic(stage_dir / "stage.json", record)
    shutil.rmtree(ck_dir, ignore_errors=True)
    return record
