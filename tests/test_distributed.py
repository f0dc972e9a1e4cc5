"""FSDP2 and DDP run in two real CPU processes and report the policy's dtypes; the memory model."""

import math

import pytest

pytestmark = pytest.mark.slow
import torch

from amp_docs_lib.distributed import ddp_compare, fsdp_probe, launch, memory


@pytest.fixture(scope="module")
def probes():
    return ddp_compare.run_distributed_probes(2, backend="gloo", timeout_s=120)


def _dtypes(df, stage):
    return set(df[df["stage"] == stage]["dtype"])


def test_fsdp_two_processes_report_policy_dtypes(probes):
    df = probes["FSDP2"]
    assert sorted(df["rank"].unique()) == [0, 1]
    assert _dtypes(df, "1 sharded parameter (stored)") == {"float32"}
    assert _dtypes(df, "2 parameter seen in forward") == {"bfloat16"}
    assert _dtypes(df, "3 layer input in forward") == {"bfloat16"}  # cast_forward_inputs
    assert _dtypes(df, "6 gradient (sharded)") == {"float32"}
    assert _dtypes(df, "8 optimizer state") == {"float32"}
    coll = df[df["stage"] == "7 collective"]
    assert set(coll[coll["tensor"] == "all_gather"]["dtype"]) == {"bfloat16"}
    assert set(coll[coll["tensor"] == "reduce_scatter"]["dtype"]) == {"float32"}
    stored = df[df["stage"] == "1 sharded parameter (stored)"]
    w0 = stored[(stored["rank"] == 0) & (stored["tensor"] == "0.weight")].iloc[0]
    assert w0["global shape"] == (32, 16) and w0["local shape"] == (16, 16)
    fwd = df[(df["stage"] == "2 parameter seen in forward") & (df["tensor"] == "0.weight")]
    assert set(fwd["local shape"]) == {(32, 16)}


def test_measured_sizes_match_memory_model(probes):
    df = probes["FSDP2"]
    n = sum(p.numel() for p in fsdp_probe.make_mlp(16, 32, 4).parameters())
    state = df[df["stage"].isin(["1 sharded parameter (stored)", "6 gradient (sharded)", "8 optimizer state"])]
    per_rank = state.groupby("rank")["local bytes"].sum()
    assert set(per_rank) == {memory.per_rank_bytes(n, 2, "FSDP", "amp_bf16")["total"]}
    coll = df[(df["stage"] == "7 collective") & (df["rank"] == 0)]
    pred = memory.comm_per_step(n, 2, "FSDP", "amp_bf16").set_index("collective")
    assert coll[coll["tensor"] == "all_gather"]["local bytes"].sum() == pred.loc["all_gather", "buffer bytes"]
    assert coll[coll["tensor"] == "reduce_scatter"]["local bytes"].sum() == pred.loc["reduce_scatter", "buffer bytes"]


def test_ddp_hooks_change_only_the_wire_dtype(probes):
    plain, comp = probes["DDP + allreduce_hook"], probes["DDP + bf16_compress_hook"]
    assert _dtypes(plain, "7 collective") == {"float32"} and _dtypes(comp, "7 collective") == {"bfloat16"}
    for df in (plain, comp):
        assert _dtypes(df, "6 gradient (replicated)") == {"float32"}
        assert _dtypes(df, "4 layer output in forward") == {"bfloat16"}


def test_memory_hand_computed_cases():
    # N = 1000, K = 4, mixed-precision Adam: 2 + 2 + 12 bytes per parameter (ZeRO paper)
    assert memory.per_rank_bytes(1000, 4, "DDP", "bf16_master")["total"] == 16_000
    assert memory.per_rank_bytes(1000, 4, "ZeRO-1", "bf16_master")["total"] == 2000 + 2000 + 12 * 250
    assert memory.per_rank_bytes(1000, 4, "ZeRO-2", "bf16_master")["total"] == 2000 + 14 * 250
    assert memory.per_rank_bytes(1000, 4, "ZeRO-3", "bf16_master")["total"] == 16 * 250
    assert memory.per_rank_bytes(1000, 4, "FSDP", "bf16")["total"] == 8 * 250
    assert memory.per_rank_bytes(10, 3, "FSDP", "fp32")["total"] == 16 * math.ceil(10 / 3)
    assert memory.per_rank_bytes(1000, 1, "ZeRO-3", "fp32")["total"] == 16_000
    # ZeRO paper, Figure 1: 7.5B parameters, 64 GPUs
    gb = [memory.per_rank_bytes(7_500_000_000, 64, s, "bf16_master")["total"] / 1e9
          for s in ("DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3")]
    assert [round(g, 1) for g in gb] == [120.0, 31.4, 16.6, 1.9]
    ddp = memory.comm_per_step(1000, 4, "DDP", "fp32")
    assert ddp["bytes sent per rank"].sum() == 2 * 3 / 4 * 4000
    z3 = memory.comm_per_step(1000, 4, "ZeRO-3", "fp32")["bytes sent per rank"].sum()
    assert z3 == 1.5 * ddp["bytes sent per rank"].sum()


def test_bad_input():
    with pytest.raises(ValueError, match="valid strategies"):
        memory.per_rank_bytes(10, 2, "ZeRO-4", "fp32")
    with pytest.raises(ValueError, match="valid precisions"):
        memory.per_rank_bytes(10, 2, "DDP", "fp8")
    with pytest.raises(TypeError):
        memory.per_rank_bytes(10.5, 2, "DDP", "fp32")
    with pytest.raises(ValueError, match="valid backends"):
        launch.run_workers(fsdp_probe.fsdp_worker, 2, backend="mpi")
    with pytest.raises(ValueError, match="valid dtypes"):
        fsdp_probe.run_fsdp_probe(2, param_dtype="float8")
    with pytest.raises(ValueError, match="world_size"):
        launch.run_workers(fsdp_probe.fsdp_worker, 0)
    assert 0 < launch.free_port() < 65536


def _failing_worker(rank, world_size, device):
    if rank == 1:
        raise RuntimeError("planted failure on rank 1")
    return [{"ok": True}]


def test_a_failing_rank_fails_the_parent_loudly():
    with pytest.raises(Exception, match="planted failure on rank 1"):
        launch.run_workers(_failing_worker, 2, backend="gloo", timeout_s=30)


def _aborting_in_teardown_worker(rank, world_size, device):
    import os
    import threading
    import time

    # A non-daemon thread that aborts the process 2 s later, as gloo's threads can while a
    # process is torn down: interpreter shutdown waits for it, so the abort comes after the work.
    threading.Thread(target=lambda: (time.sleep(2.0), os.abort())).start()
    return [{"value": 10 * rank}]


def _killed_before_its_rows_worker(rank, world_size, device):
    import os

    if rank == 1:
        os.abort()
    return [{"value": rank}]


def test_an_abort_after_every_rank_finished_keeps_the_results():
    df = launch.run_workers(_aborting_in_teardown_worker, 2, backend="gloo", timeout_s=60)
    assert list(df["value"]) == [0, 10]


def test_a_rank_killed_before_it_reported_fails_the_parent():
    with pytest.raises(Exception, match="signal SIGABRT"):
        launch.run_workers(_killed_before_its_rows_worker, 2, backend="gloo", timeout_s=30)


class _CtxOneRankAborted:
    processes = [type("P", (), {"join": lambda self, timeout=None: None})() for _ in range(2)]

    def join(self, timeout=None):
        raise torch.multiprocessing.ProcessExitedException(
            "process 0 terminated with signal SIGABRT", error_index=0, error_pid=1, exit_code=-6,
            signal_name="SIGABRT")


def test_join_accepts_a_teardown_abort_only_when_every_rank_wrote_its_rows(tmp_path):
    (tmp_path / "rank0.pkl").write_bytes(b"")
    with pytest.raises(torch.multiprocessing.ProcessExitedException):
        launch._join(_CtxOneRankAborted(), str(tmp_path))  # rank 1's rows are missing
    (tmp_path / "rank1.pkl").write_bytes(b"")
    assert launch._join(_CtxOneRankAborted(), str(tmp_path)) is True


def test_reduce_dtype_none_follows_the_installed_documentation(probes):
    from torch.distributed.fsdp import MixedPrecisionPolicy

    from amp_docs_lib.distributed import policies

    df = probes[ddp_compare.REDUCE_NONE_VARIANT]
    rs = df[(df["stage"] == "7 collective") & (df["tensor"] == "reduce_scatter")]
    # the chapter's own reading of the installed documentation (one source of truth)
    documented_new = policies.version_note(policies.attribute_doc(MixedPrecisionPolicy, "reduce_dtype"), "2.15") is not None
    assert set(rs["dtype"]) == ({"float32"} if documented_new else {"bfloat16"})


def test_ddp_buckets_are_measured_and_the_calculator_must_count_them(probes):
    mem = probes[ddp_compare.MEMORY]
    n = sum(p.numel() for p in fsdp_probe.make_mlp(16, 32, 4).parameters())
    default = mem[mem["gradient_as_bucket_view"] == False]  # noqa: E712
    view = mem[mem["gradient_as_bucket_view"] == True]  # noqa: E712
    with_buckets = memory.per_rank_bytes(n, 2, "DDP", "amp_bf16", ddp_buckets=True)["total"]
    without = memory.per_rank_bytes(n, 2, "DDP", "amp_bf16")["total"]
    assert set(default["distinct storages"].astype(int)) == {with_buckets}
    assert with_buckets != without  # a calculator without buckets would fail the page's claim
    assert set(view["distinct storages"].astype(int)) == {without} and view["gradients inside the buckets"].all()
    assert set(default["bucket buffers"].astype(int)) == {4 * n}


def test_bf16_reduction_error_is_bf16_sized(probes):
    err = probes[ddp_compare.REDUCTION_ERROR]
    autocast = err[err["step"] == "autocast(bfloat16)"]
    fp32 = err[err["step"] == "FP32, no autocast"]
    # autocast's gradients are BF16 values: the hook's cast and its division by 2 are exact, one rounding remains
    assert autocast["local gradients are BF16 values"].all()
    assert 2.0**-24 < autocast["max relative error"].max() <= 2.0**-8
    # FP32 gradients are rounded by the cast too; where the ranks cancel, the elementwise error is unbounded
    assert not fp32["local gradients are BF16 values"].any()
    assert fp32["max relative error"].max() > 2.0**-8
    assert (err["relative error of the norm"] > 0).all()


def test_accumulation_without_sync_skips_reduce_scatter(probes):
    acc = probes[ddp_compare.ACCUMULATION]
    assert "bfloat16" not in ddp_compare.ACCUMULATION_REDUCE_DTYPES  # param_dtype would hide the cast
    for reduce_dtype in ddp_compare.ACCUMULATION_REDUCE_DTYPES:
        runs = acc[acc["reduce_dtype"] == reduce_dtype]
        first, last = runs[runs["microbatch"] == 0], runs[runs["microbatch"] == 1]
        assert (first["reduce-scatters"] == 0).all() and (last["reduce-scatters"] == 3).all()
        assert set(last["reduce dtypes"]) == {reduce_dtype}
        # FSDP accumulates in reduce_dtype between microbatches, not in param_dtype (bfloat16)
        assert set(first["accumulated inside FSDP"]) == {reduce_dtype}


def test_fp16_loss_scaling_ranks_agree(probes):
    ls = probes[ddp_compare.LOSS_SCALING]
    fsdp = ls[ls["variant"] == "FSDP2 + GradScaler"].set_index("rank")
    assert bool(fsdp.loc[0, "inf in this rank's gradients"]) and not bool(fsdp.loc[1, "inf in this rank's gradients"])
    for variant, grp in ls.groupby("variant"):
        assert len(set(grp["found inf"])) == 1, variant  # every rank took the same decision
        assert not grp["stepped"].astype(bool).any(), variant


def test_zero12_gather_the_stored_dtype_zero3_the_compute_dtype():
    n, k = 1000, 4
    g = lambda s, p: set(memory.comm_per_step(n, k, s, p).query("collective == 'all_gather'")["dtype"])  # noqa: E731
    assert g("ZeRO-1", "amp_bf16") == {"float32"} and g("ZeRO-2", "amp_bf16") == {"float32"}
    assert g("ZeRO-3", "amp_bf16") == {"bfloat16"} and g("FSDP", "amp_bf16") == {"bfloat16"}
    assert g("ZeRO-1", "bf16_master") == {"bfloat16"}
    # the paper's baseline leaves DDP's buckets out; counting them adds the gradients' bytes once
    base = memory.per_rank_bytes(n, k, "DDP", "fp32")
    assert memory.per_rank_bytes(n, k, "DDP", "fp32", ddp_buckets=True)["total"] == base["total"] + base["grad"]
    assert memory.per_rank_bytes(n, k, "FSDP", "fp32", ddp_buckets=True)["buckets"] == 0
    with pytest.raises(TypeError, match="ddp_buckets"):
        memory.per_rank_bytes(n, k, "DDP", "fp32", ddp_buckets="yes")


def test_fsdp2_param_dtype_runs_norm_softmax_and_loss_in_bf16(probes):
    ns = probes[ddp_compare.NORM_SOFTMAX]
    fs = ns[ns["variant"] == "FSDP2 param_dtype=bfloat16"]
    assert set(fs["LayerNorm output"]) == set(fs["log_softmax"]) == set(fs["loss"]) == {"bfloat16"}


def test_collective_log_records_kind_and_function_once(monkeypatch):
    """Either torch API is recorded under its kind, and a collective implemented by another
    wrapped collective is counted once (torch versions differ in which FSDP2 calls)."""
    import torch
    import torch.distributed as dist

    from amp_docs_lib.distributed.comm_log import log_collectives

    calls = []
    monkeypatch.setattr(dist, "reduce_scatter_tensor", lambda output, input, *a, **k: calls.append("rst"),
                        raising=False)
    monkeypatch.setattr(dist, "all_gather_into_tensor",
                        lambda output_tensor, input_tensor, *a, **k: dist.all_gather_single(output_tensor, input_tensor),
                        raising=False)
    monkeypatch.setattr(dist, "all_gather_single", lambda output_tensor, input_tensor, *a, **k: calls.append("ags"),
                        raising=False)
    with log_collectives() as log:
        dist.reduce_scatter_tensor(torch.zeros(2), torch.zeros(4, dtype=torch.bfloat16))
        dist.all_gather_into_tensor(torch.zeros(8), torch.zeros(4))  # calls all_gather_single inside
    assert calls == ["rst", "ags"]
    assert [(r["collective"], r["function"], r["dtype"], r["elements"]) for r in log] == [
        ("reduce_scatter", "reduce_scatter_tensor", "bfloat16", 4),
        ("all_gather", "all_gather_into_tensor", "float32", 8)]
