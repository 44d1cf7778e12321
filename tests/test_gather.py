"""In-batch negatives over two processes (gloo): for every loss with in-batch negatives, two DDP processes that
each hold a share of the global batch give the one-process loss and gradients on the global batch
(:mod:`xlsent.losses.gather`), and the momentum queues stay equal to one process's."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest
import torch

N, D_IN, D = 8, 6, 5
#: spans held by rank 0 (the rest are rank 1's): the SCP cases give the processes unequal shares
SCP_SPLIT = 5
CASES = ["ranking", "ranking-kd", "mcl-soft", "mcl-bool", "mcl-ce", "mcl-infonce", "contrastive-distill",
         "align", "sim-sum", "sim-mean", "scp-in-batch", "scp-moco", "scp-cl-moco", "scp-cl-moco-printed"]


def _data():
    g = torch.Generator().manual_seed(0)
    xs, xt, teacher = torch.randn(N, D_IN, generator=g), torch.randn(N, D_IN, generator=g), torch.randn(N, D, generator=g)
    teacher[3] = teacher[1]  # two equal targets: the multi-positive branch of the contrastive distillation
    queue = torch.nn.functional.normalize(torch.randn(6, D, generator=g), dim=-1)
    return xs, xt, teacher, queue


def _models():
    torch.manual_seed(0)
    fast, slow = torch.nn.Linear(D_IN, D), torch.nn.Linear(D_IN, D)
    return fast, slow


def _loss(case: str, fast, slow, rows: slice):
    """The case's loss on the rows this process holds, and the queues after the step (SCP's MoCo variants)."""
    from xlsent.losses.contrastive_distill_loss import ContrastiveDistillLoss
    from xlsent.losses.lightweight_losses import align_loss, sim_loss
    from xlsent.losses.multilingual_contrastive_loss import MultilingualContrastiveLoss
    from xlsent.losses.ranking_distill_loss import RankingDistillLoss
    from xlsent.losses.structural_contrastive_loss import StructuralContrastiveLoss

    xs, xt, teacher, queue = _data()
    u, v, t = fast(xs[rows]), fast(xt[rows]), teacher[rows]
    if case.startswith("ranking"):
        loss = RankingDistillLoss(torch.nn.Identity(), kd_weight=1.0 if case == "ranking-kd" else 0.0)
        return loss.compute_loss_from_embeddings([u, v], t), None
    if case.startswith("mcl"):
        variant = "soft" if case == "mcl-infonce" else case.split("-")[1]
        loss = MultilingualContrastiveLoss(torch.nn.Identity(), variant, infonce_weight=float(case == "mcl-infonce"))
        return loss.compute_loss_from_embeddings(u, v, t), None
    if case == "contrastive-distill":
        return ContrastiveDistillLoss(torch.nn.Identity()).compute_loss_from_embeddings([u, v], t), None
    if case == "align":
        return align_loss(u, v), None
    if case.startswith("sim"):
        return sim_loss(u, v, case.split("-")[1]), None
    variant = case.removeprefix("scp-").removesuffix("-printed")
    loss = StructuralContrastiveLoss(D, variant, tau=0.1, queue_size=10,
                                     negatives="printed" if case.endswith("printed") else "key")
    for q in (loss.queue_s, loss.queue_t):
        if q.size:
            q.push(queue)
    with torch.no_grad():
        ks, kt = slow(xs[rows]), slow(xt[rows])
    out = loss(u, v, ks, kt)
    return out, torch.cat([loss.queue_s.contents(), loss.queue_t.contents()])


def _rows(case: str, rank: int, world: int) -> slice:
    if world == 1:
        return slice(0, N)
    cut = SCP_SPLIT if case.startswith("scp") else N // 2
    return slice(0, cut) if rank == 0 else slice(cut, N)


def _worker(out: str) -> None:
    """One rank, started by torchrun (the launcher users run): every case's loss, gradients and queues."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = {}
    for case in CASES:
        fast, slow = _models()
        ddp = DDP(fast)
        loss, queues = _loss(case, ddp, slow, _rows(case, rank, world))
        loss.backward()  # DDP averages the processes' gradients
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        results[case] = {"loss": mean / world, "grads": [p.grad.clone() for p in fast.parameters()], "queues": queues}
    torch.save(results, f"{out}.{rank}")
    del ddp, fast, slow, loss, results  # DDP's reducer and its hooks go before the group they use
    gc.collect()
    dist.barrier()  # neither rank closes its connections while the other still uses them
    dist.destroy_process_group()
    # the results are on disk: leave without the interpreter's teardown, where a C++ thread still joinable at exit
    # aborted a rank once in a while ("terminate called without an active exception", CI, twice)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gather")
    out = str(tmp / "ranks")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp)}
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          __file__, out], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, f"torchrun exited {run.returncode}:\n{run.stderr[-4000:]}"
    return [torch.load(f"{out}.{r}") for r in range(2)]


@pytest.mark.parametrize("case", CASES)
def test_two_ranks_equal_one_process_on_the_global_batch(two_ranks, case):
    fast, slow = _models()
    loss, queues = _loss(case, fast, slow, _rows(case, 0, 1))
    loss.backward()
    assert torch.isfinite(loss) and float(loss.detach()) > 0
    for rank in two_ranks:
        got = rank[case]
        torch.testing.assert_close(got["loss"], loss.detach(), rtol=1e-5, atol=1e-6)
        for g, p in zip(got["grads"], fast.parameters()):
            assert p.grad.abs().sum() > 0
            torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-6)
        if queues is not None:
            torch.testing.assert_close(got["queues"], queues)  # every key enqueued, in the global batch's order


def test_a_share_alone_sees_fewer_negatives():
    """Without gathering, a share's in-batch loss differs from the global batch's (the test above can fail)."""
    from xlsent.losses.lightweight_losses import align_loss

    fast, _ = _models()
    xs, xt, _, _ = _data()
    whole = align_loss(fast(xs), fast(xt))
    halves = (align_loss(fast(xs[:4]), fast(xt[:4])) + align_loss(fast(xs[4:]), fast(xt[4:]))) / 2
    assert abs(float(whole) - float(halves)) > 1e-3


if __name__ == "__main__":  # a rank under torchrun (the fixture two_ranks)
    _worker(sys.argv[1])
