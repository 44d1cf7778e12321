"""Training machinery shared by every recipe and by the export and model layers that train: run folders
(config hash, checkpoints, resume, done marker), the processes of a run (torchrun / accelerate launch) and
the one training loop (Accelerate: device, precision, data parallelism, accumulation, checkpoint/resume)."""
