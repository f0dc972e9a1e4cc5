"""Issue 34's read of the distributed chapter: checks that can fail when the page's sentences are false."""

import math

import pytest

from amp_docs_lib.distributed import ddp_compare, fsdp_probe, memory
from amp_docs_lib.distributed.launch import run_workers
from amp_docs_lib.distributed.loss_scaling import scaler_agreement_worker

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def probes():
    return ddp_compare.run_distributed_probes(2, backend="gloo", timeout_s=120)


def test_forward_hooks_record_every_parameter_biases_included(probes):
    names = {n for n, _ in fsdp_probe.make_mlp(16, 32, 4).named_parameters()}
    for setup in ("FSDP2", "DDP + allreduce_hook"):
        df = probes[setup]
        fwd = df[(df["stage"] == "2 parameter seen in forward") & (df["rank"] == 0)]
        assert set(fwd["tensor"]) == names, setup
    fsdp = probes["FSDP2"]
    fwd = fsdp[fsdp["stage"] == "2 parameter seen in forward"]
    assert set(fwd[fwd["tensor"] == "4.bias"]["local shape"]) == {(4,)}  # all-gathered, not the (2,) shard
    assert set(fwd["dtype"]) == {"bfloat16"}


def test_accumulation_dtypes_differ_from_param_dtype(probes):
    # with reduce_dtype == param_dtype the accumulated dtype cannot tell "cast to reduce_dtype" from "kept"
    acc = probes[ddp_compare.ACCUMULATION]
    first = acc[acc["microbatch"] == 0]
    held = {rd: set(grp["accumulated inside FSDP"]) for rd, grp in first.groupby("reduce_dtype")}
    assert held == {rd: {rd} for rd in ddp_compare.ACCUMULATION_REDUCE_DTYPES}
    assert all("bfloat16" not in v for v in held.values())


def test_bf16_compressed_average_is_rounded_once_only_under_autocast(probes):
    err = probes[ddp_compare.REDUCTION_ERROR]
    share = "share equal to the FP32 result rounded once to BF16"
    autocast = err[err["step"] == "autocast(bfloat16)"]
    fp32 = err[err["step"] == "FP32, no autocast"]
    assert (autocast[share] == 1.0).all()
    assert fp32[share].min() < 1.0  # FP32 gradients are rounded before the sum too
    assert 0 < fp32["relative error of the norm"].max() < 2.0**-8


def test_measured_comm_ratio_is_amp_bf16s_not_the_papers_fp32(probes):
    def sent(df, kind):
        c = df[(df["stage"] == "7 collective") & (df["rank"] == 0)]
        return int(c[c["tensor"] == kind]["local bytes"].sum())

    fsdp, ddp = probes["FSDP2"], probes["DDP + allreduce_hook"]
    measured = (sent(fsdp, "all_gather") + sent(fsdp, "reduce_scatter")) / (2 * sent(ddp, "all_reduce"))
    comm = memory.comm_table(1000, 2).groupby(["precision", "strategy"])["bytes sent per rank"].sum()
    assert measured == pytest.approx(comm["amp_bf16", "FSDP"] / comm["amp_bf16", "DDP"])
    # the false variant: gathering in FP32 doubles the all-gather bytes, giving the paper's 1.5
    fp32_gather = (2 * sent(fsdp, "all_gather") + sent(fsdp, "reduce_scatter")) / (2 * sent(ddp, "all_reduce"))
    assert fp32_gather == pytest.approx(comm["fp32", "ZeRO-3"] / comm["fp32", "DDP"]) != pytest.approx(measured)


def test_loss_scaling_probe_prints_no_dtensor_replication_warning(capfd):
    rows = run_workers(scaler_agreement_worker, 2, backend="gloo", timeout_s=120)
    assert len(rows) > 0
    assert "non-scalar tensor with numel=1" not in capfd.readouterr().err


def test_fsdp_shard_elements_pads_each_parameter_on_dim0():
    # 5 rows on 2 ranks: rank 0 holds 3 rows, not 2.5; an even split of N would say 883
    shapes = [tuple(p.shape) for p in fsdp_probe.make_mlp(16, 32, 5).parameters()]
    n = sum(math.prod(s) for s in shapes)
    assert memory.fsdp_shard_elements(shapes, 2) == 899 and -(-n // 2) == 883
    assert memory.fsdp_shard_elements([(4, 3)], 2) == 6 and memory.fsdp_shard_elements([(5,)], 4) == 2
    with pytest.raises(ValueError):
        memory.fsdp_shard_elements(shapes, 0)


def test_fsdp2_holds_and_sends_padded_shards_when_rows_do_not_divide():
    df = fsdp_probe.run_fsdp_probe(2, backend="gloo", classes=5)
    shapes = [tuple(p.shape) for p in fsdp_probe.make_mlp(16, 32, 5).parameters()]
    shard = memory.fsdp_shard_elements(shapes, 2)
    state = df[df["stage"].isin(["1 sharded parameter (stored)", "6 gradient (sharded)", "8 optimizer state"])]
    held = state.groupby("rank")["local bytes"].sum()
    assert int(held.max()) == int(held[0]) == memory.per_rank_bytes(2 * shard, 2, "FSDP", "amp_bf16")["total"]
    n = sum(math.prod(s) for s in shapes)
    assert int(held[0]) != memory.per_rank_bytes(n, 2, "FSDP", "amp_bf16")["total"]  # the even split is wrong here
    coll = df[(df["stage"] == "7 collective") & (df["rank"] == 0)]
    assert int(coll[coll["tensor"] == "reduce_scatter"]["local shape"].map(lambda s: s[0]).sum()) == 2 * shard


def test_fsdp2_averages_fp32_in_the_collective_and_sums_fp16(probes):
    acc = probes[ddp_compare.ACCUMULATION]
    last = acc[acc["microbatch"] == 1]
    ops = {rd: set(grp["reduce ops"]) for rd, grp in last.groupby("reduce_dtype")}
    assert ops == {"float32": {"AVG"}, "float16": {"SUM"}}


def test_collective_log_records_the_reduction_op_default_included():
    from amp_docs_lib.distributed import comm_log

    def all_reduce(tensor, op="SUM", group=None, async_op=False):  # the shape of torch's signature
        return None

    assert comm_log._op(all_reduce, (None,), {}) == "SUM"
    assert comm_log._op(all_reduce, (None, "AVG"), {}) == "AVG"
    assert comm_log._op(lambda output_tensor, input_tensor, group=None: None, (None, None), {}) is None
