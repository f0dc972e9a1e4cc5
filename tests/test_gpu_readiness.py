"""The CUDA branches of the chapters, run on the CPU as far as they can be (``-m gpu_readiness``).

Each test takes the part of a chapter's CUDA path that does not need a GPU (byte accounting on the
``meta`` device, which allocates nothing; the choices a chapter makes from the device it finds) and
checks it where CI runs: on a CPU.
"""

import os

import pytest
import torch

from amp_docs_lib.regimes.loop import _state_tensors, _held_bytes

pytestmark = pytest.mark.gpu_readiness


def _one_adamw_step(device: str):
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(32, 10)).to(device)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, foreach=False)  # what regimes.optimizers.make_optimizer builds
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    return params, opt


def test_allocator_count_leaves_out_the_optimizers_cpu_step_counters():
    """On a GPU, AdamW(foreach=False) keeps each parameter's ``step`` on the CPU; the CUDA allocator
    never holds it, so the count the training-regimes chapter compares with the allocator's record
    must leave it out (it counted 512 B per parameter tensor: 26,624 B for the gpu-full GPT)."""
    params, opt = _one_adamw_step("meta")  # the meta device stands in for CUDA: same placement rules
    assert {str(opt.state[p]["step"].device) for p in params} == {"cpu"}
    # parameter, gradient and two moments per parameter tensor, each in 512-byte CUDA blocks
    expected = sum(4 * (-(-p.numel() * p.element_size() // 512) * 512) for p in params)
    assert _held_bytes(_state_tensors(params, opt), torch.device("meta"), 512) == expected


def test_allocator_count_on_the_cpu_keeps_the_step_counters():
    params, opt = _one_adamw_step("cpu")
    expected = sum(4 * p.numel() * p.element_size() for p in params) + sum(
        opt.state[p]["step"].untyped_storage().nbytes() for p in params)
    assert _held_bytes(_state_tensors(params, opt), torch.device("cpu")) == expected


def test_views_share_one_storage():
    t = torch.zeros(256, device="meta")
    assert _held_bytes([t, t[:10], t.view(16, 16)], torch.device("meta"), 512) == 1024


@pytest.mark.parametrize("gpus, plan", [(0, ("gloo", 2)), (1, ("gloo", 2)), (2, ("nccl", 2)), (8, ("nccl", 2))])
def test_distributed_probes_always_have_two_ranks(gpus, plan):
    """One H100 gave one NCCL rank: no inf planted on rank 1, a BF16 reduction error of 0, and the
    chapter's claims failed. The probes run as two ranks on every machine."""
    from amp_docs_lib.distributed.launch import launch_plan

    assert launch_plan(gpus) == plan



def _gpu_ladder():
    from amp_docs_lib.bench import model_sweep
    from amp_docs_lib.core.profiles import get_profile

    P = get_profile("gpu-full")
    return P, model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])


@pytest.mark.parametrize("gib, fits", [
    (16, ["small", "medium"]), (24, ["small", "medium", "large"]), (40, ["small", "medium", "large", "xl"]),
    (80, ["small", "medium", "large", "xl", "2.7B"])])
def test_performance_sweep_plans_gpu_full_for_the_device(gib, fits):
    """The gpu-full ladder kept four models (and four AdamWs) alive per size: 2.7B needed over 85 GB and
    failed on an H100. Planned per size with one shared model: what fits a 16-80 GiB card."""
    from amp_docs_lib.bench import model_sweep

    P, cfgs = _gpu_ladder()
    cuda_precisions = ("fp32", model_sweep.TF32, "amp_bf16", "amp_fp16")  # sm80+
    plans = {n: model_sweep.step_plan_bytes(c, P["perf_gpt_batch"], cuda_precisions) for n, c in cfgs.items()}
    assert [n for n, b in plans.items() if b <= gib * 2**30 * 0.95] == fits  # 5% of the card already in use


def test_performance_sweep_plan_counts_the_models_parameters():
    """The plan's parameter count is the model's, built on the meta device (no memory)."""
    from amp_docs_lib.bench import memory
    from amp_docs_lib.gpt import GPT

    _, cfgs = _gpu_ladder()
    with torch.device("meta"):
        model = GPT(cfgs["xl"])
    assert sum(p.numel() for p in model.parameters()) == memory.count_parameters(cfgs["xl"])


def test_performance_sweep_skips_what_does_not_fit_and_says_so():
    from amp_docs_lib.bench import model_sweep
    from amp_docs_lib.core.timing import MIN_ROUNDS
    from amp_docs_lib.gpt import GPTConfig

    cfgs = {"tiny": GPTConfig(vocab_size=64, block_size=8, n_layer=1, n_embd=16, n_head=2),
            "big": GPTConfig(vocab_size=64, block_size=8, n_layer=2, n_embd=256, n_head=4)}
    budget = (model_sweep.step_plan_bytes(cfgs["tiny"], 2, ("fp32", "amp_bf16"))
              + model_sweep.step_plan_bytes(cfgs["big"], 2, ("fp32", "amp_bf16"))) // 2
    df = model_sweep.sweep(cfgs, 2, ("fp32", "amp_bf16"), "cpu", rounds=MIN_ROUNDS, min_block_s=0.001, warmup=1,
                           memory_bytes=budget)
    assert set(df["size"]) == {"tiny"} and list(df.attrs["plan"].skipped) == ["big"]
    note = model_sweep.memory_note(df)
    assert note.startswith("big left out:") and "GiB free" in note


@pytest.mark.parametrize("cores, gpus, jobs", [(2, 0, 2), (16, 0, 16), (16, 1, 1), (16, 8, 1)])
def test_one_chapter_at_a_time_on_a_cuda_machine(cores, gpus, jobs):
    """'One kernel per core' ran up to 9 chapters on one H100 at once (one doubling its batch until the GPU is
    full, others timing GEMMs). Without AMP_DOCS_JOBS, a CUDA machine executes one chapter at a time."""
    from amp_docs_lib.docsite.execute import default_jobs

    assert default_jobs(cores, gpus) == jobs


@pytest.mark.parametrize("gib, measured", [(24, ["small", "large"]), (80, ["small", "large", "xl"])])
def test_performance_memory_comparison_measures_what_fits(gib, measured):
    """The memory comparison measured the xl model on every GPU: about 22 GiB of FP32 state and more,
    past a 24 GiB card. Its plan leaves out what does not fit."""
    from amp_docs_lib.bench import memory

    P, cfgs = _gpu_ladder()
    plan = memory.memory_plan({s: cfgs[s] for s in P["perf_memory_sizes"]}, P["perf_gpt_batch"],
                              ("fp32", "amp_bf16", "bf16"), "cpu", memory_bytes=int(gib * 2**30 * 0.95))
    assert [s for s in P["perf_memory_sizes"] if plan.fits(s)] == measured
    assert ("xl left out" in plan.note()) == ("xl" not in measured)


def _fake_nvidia_smi(tmp_path, accepts: str) -> None:
    """An ``nvidia-smi`` on PATH that answers only queries naming ``accepts``."""
    script = tmp_path / "nvidia-smi"
    script.write_text("#!/bin/sh\n"
                      f'case "$*" in *{accepts}*) printf "name, clocks.sm [MHz], {accepts}.active\\n'
                      'NVIDIA H100, 1980 MHz, 0x0000000000000000\\n"; exit 0;; esac\n'
                      'echo "Field is not a valid field to query." >&2; exit 2\n')
    script.chmod(0o755)


@pytest.mark.parametrize("driver_field", ["clocks_event_reasons", "clocks_throttle_reasons"])
def test_gpu_clock_state_reads_new_and_old_drivers(tmp_path, monkeypatch, driver_field):
    """Drivers since R535 renamed the throttle field; the clock-state cell asked only the old name, with
    check=True, so a driver refusing it would fail the performance chapter."""
    from amp_docs_lib.bench.peaks import gpu_clock_state

    _fake_nvidia_smi(tmp_path, driver_field)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    row = gpu_clock_state().iloc[0].to_dict()
    assert row.get(f"{driver_field}.active") == "0x0000000000000000", row


def test_gpu_clock_state_says_when_nvidia_smi_refuses(tmp_path, monkeypatch):
    from amp_docs_lib.bench.peaks import gpu_clock_state

    _fake_nvidia_smi(tmp_path, "no_such_field")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert "query refused" in gpu_clock_state().iloc[0]["nvidia-smi"]


def test_a_dispatch_trace_counts_only_ops_that_ran():
    """torchao's safe_int_mm catches a refused aten._int_mm (on CUDA, too few rows) and runs an FP32 matmul;
    the trace recorded the refused call first, so a trace would report an integer matmul that never ran."""
    from amp_docs_lib.core.dispatch import trace_ops

    def falls_back():
        try:
            torch.mm(torch.ones(2, 3), torch.ones(2, 3))  # refused: shapes do not chain
        except RuntimeError:
            pass
        return torch.mm(torch.ones(2, 3), torch.ones(3, 2))

    trace = trace_ops(falls_back)
    assert trace.counts["aten.mm"] == 1 and len(trace.matmuls) == 1


def test_quantization_gpu_table_names_the_matmul_that_ran():
    """The GPU table's speedups came without the kernel that produced them (INT8 dynamic at batch 1 times
    torchao's FP32 fallback on CUDA). Each batch has a 'matmul that ran' column from a dispatch trace; the
    GPU cell's code runs here on the CPU."""
    from functools import partial

    from amp_docs_lib.core.timing import MIN_ROUNDS, interleaved
    from amp_docs_lib.quantization import ptq, task

    with task.single_thread():
        small = task._trained(32, 2, 0)
        df = ptq.gpu_table(small, ("int8_wo",), partial(interleaved, rounds=MIN_ROUNDS, min_block_s=0.001, warmup=1),
                           features=64, batches=(2,), device="cpu").set_index("variant")
    ran = df["batch 2: matmul that ran"]
    assert ran["BF16"].startswith("aten.") and "bfloat16" in ran["BF16"], ran.to_dict()
    assert ran[ptq.VARIANTS["int8_wo"].label] not in (None, "none"), ran.to_dict()


@pytest.mark.parametrize("fp8_on, size, used", [("cuda", 8192, 8192), ("cpu", 8192, 512), ("cpu", 256, 256)])
def test_fp8_gemm_sizes_follow_where_the_gemm_runs(monkeypatch, fp8_on, size, used):
    """On a GPU without FP8 tensor cores (an sm86 card) the FP8 GEMMs run on the CPU: at gpu-full's 8192³
    they took minutes per call, near the cell timeout. The size follows where they run."""
    from amp_docs_lib.fp8 import gemm

    monkeypatch.setattr(gemm, "fp8_device", lambda: fp8_on)
    assert gemm.gemm_size(size) == used


@pytest.mark.parametrize("error, oom", [
    (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"), True),
    (RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"), True),
    (RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"), False),
    (ValueError("out of memory"), False)])
def test_a_full_gpu_is_recognised_however_it_is_reported(error, oom):
    """The largest-batch searches caught only torch.OutOfMemoryError; near the limit cuBLAS can fail to allocate
    its workspace instead, a plain RuntimeError, and the chapter failed. Other errors still propagate."""
    from amp_docs_lib.core.devices import is_out_of_memory

    assert is_out_of_memory(error) is oom


@pytest.mark.parametrize("start", [1, 3, 37, 100, 512])
def test_largest_batch_search_finds_the_boundary_from_any_guess(start):
    """The largest-batch search (performance chapter, CUDA) starts at the planned batch; wherever that
    guess lands, the answer is the batch where memory runs out."""
    from amp_docs_lib.bench.memory import search_largest

    for threshold in [0, 1, 2, 5, 37, 64, 99, 100, 101, 300, 512]:
        found, _ = search_largest(lambda b, t=threshold: b <= t, start, 512)
        assert found == threshold, (start, threshold)


def test_largest_batch_search_from_a_good_plan_takes_few_trials():
    """Doubling from batch 1 took about 19 steps per precision (57 steps of a 721M-parameter model for
    the chapter's three, near the cell's time limit); from a plan within 25% it takes 9 or fewer."""
    from amp_docs_lib.bench.memory import search_largest

    for threshold in (100, 250, 400):
        found, trials = search_largest(lambda b, t=threshold: b <= t, int(threshold * 0.8), 512)
        assert found == threshold and trials <= 9
        assert search_largest(lambda b, t=threshold: b <= t, 1, 512)[1] > 12  # the old start


@pytest.mark.parametrize("gib", [16, 24, 80])
def test_largest_batch_plan_is_the_largest_batch_whose_plan_fits(gib):
    """The planned batch of the chapter's model on a 16, 24 and 80 GiB card: its plan fits, one more does not."""
    from amp_docs_lib.bench import memory

    P, cfgs = _gpu_ladder()
    big = cfgs[P["perf_memory_sizes"][1]]
    free = int(gib * 2**30 * 0.95)
    for precision in ("fp32", "amp_bf16", "bf16", "amp_fp16"):
        b = memory.planned_largest_batch(big, precision, free, 512)
        regime = "amp_bf16" if precision == "amp_fp16" else precision
        assert b == 0 or memory.plan_bytes(big, b, (regime,)) <= free
        assert b == 512 or memory.plan_bytes(big, b + 1, (regime,)) > free
    assert memory.planned_largest_batch(big, "fp32", free, 512) < memory.planned_largest_batch(big, "bf16", free, 512)
    with pytest.raises(ValueError, match="'fp64'.*valid"):
        memory.planned_largest_batch(big, "fp64", free, 512)


def test_memory_step_builds_the_model_where_it_runs(monkeypatch):
    """measure_step builds the model on its device (a 721M-parameter model initialised on the host and
    copied took seconds per trial of the largest-batch search). Checked on the CPU: the model is only
    cast to its dtype, never moved to a device."""
    from amp_docs_lib.bench import memory
    from amp_docs_lib.gpt import GPTConfig

    moved = []
    real_to = torch.nn.Module.to

    def spy_to(self, *args, **kwargs):
        moved.append(args[0] if args else kwargs.get("device"))
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", spy_to)
    memory.measure_step(GPTConfig(vocab_size=64, block_size=8, n_layer=1, n_embd=16, n_head=2), 2, "fp32", "cpu")
    assert not any(isinstance(a, (str, torch.device)) for a in moved)  # only dtype casts


def test_regimes_allocator_claim_holds_only_for_small_pool_tensors():
    """The training-regimes claim "the allocator holds exactly the bytes the tensors count" rounds each
    storage to 512 bytes, which is the CUDA caching allocator's rounding only in its small pool (requests
    up to 1 MiB); a larger request may get an unsplit block up to 1 MiB bigger. At gpu-full every tensor a
    regime keeps (an FP32 master at most 4 bytes per element) is under 1 MiB: a profile that grows the
    model past it must change the claim's rounding first."""
    from amp_docs_lib.core.profiles import get_profile
    from amp_docs_lib.gpt import GPT
    from amp_docs_lib.regimes.loop import model_config

    with torch.device("meta"):
        model = GPT(model_config(get_profile("gpu-full")))
    largest = max(t.numel() * 4 for t in [*model.parameters(), *model.buffers()])
    assert largest <= 2**20, f"largest FP32 tensor {largest} bytes is past the small pool"


def test_exercise_budget_cell_keeps_its_budget_on_a_cuda_machine(monkeypatch):
    """On CUDA the batch-size exercise ignored --budget-mb, so the chapter's budget cell ran to --max-batch for
    every precision and its claim failed. The cell's own arguments (read from the chapter; a smaller MLP and
    budget, for speed), run as on a machine whose default device is CUDA, stop at the budget for every
    precision."""
    import ast
    import re

    from amp_docs_lib.core import devices
    from amp_docs_lib.core.paths import CHAPTERS_DIR
    from amp_docs_lib.page.snippets import run_snippet

    text = (CHAPTERS_DIR / "exercises.md").read_text()
    call = re.search(r'run_snippet\("exercises/batch_size_limit\.py", (\[.*?\])\)', text, re.S)
    args = [*ast.literal_eval(call.group(1)), "--width", "16", "--budget-mb", "0.25"]  # the same, smaller (faster)
    monkeypatch.setattr(devices, "default_device", lambda: "cuda")  # what the script sees on a GPU machine
    largest = run_snippet("exercises/batch_size_limit.py", args).globals["RESULT"]["largest"]
    assert all(v["largest batch"] and not v["capped"] for v in largest.values()), largest
