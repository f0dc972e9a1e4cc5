"""One training loop for every precision regime, logging what each regime does.

``train_regime("amp_bf16")`` trains the library's GPT (:mod:`amp_docs_lib.gpt`) on the
generated Markov corpus (:mod:`amp_docs_lib.regimes.corpus`) under one regime of
:data:`amp_docs_lib.amp.precision.REGIMES` and logs, per step: train loss, global gradient
norm, step time, tokens per second, peak CUDA memory, the GradScaler's scale and whether
the step was skipped; and, every ``eval_every`` steps, the loss on a fixed validation set.
A non-finite loss is recorded in the run's ``status`` instead of raising.

Everything is seeded: the same model initialisation, the same batches and the same
validation windows for every regime, so two runs on one machine print the same losses.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import pandas as pd
import torch
import torch.nn.functional as F

from amp_docs_lib.regimes.corpus import Corpus, make_corpus
from amp_docs_lib.core.devices import check_device, default_device
from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.amp.precision import REGIMES, Regime, get_regime, regimes_for
from amp_docs_lib.regimes.optimizers import make_optimizer
from amp_docs_lib.core.checks import positive_int
from amp_docs_lib.core.profiles import Profile, active_profile


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters shared by every regime (only the precision differs between runs).

    Attributes:
        steps: optimizer steps.
        batch_size: windows per batch.
        lr: peak learning rate (AdamW); a regime may multiply it (``Regime.lr_scale``).
        warmup: linear warm-up steps; then cosine decay to ``min_lr_ratio * lr``.
        min_lr_ratio: final learning rate as a fraction of the peak.
        eval_every: steps between validation evaluations (and one at the last step).
        eval_windows: validation windows (fixed, the same for every run).
        nonfinite_patience: stop after this many consecutive non-finite losses (with a
            GradScaler, skipped steps can continue; without, the first one stops the run).
        seed: seeds the initialisation and the batch order.
    """

    steps: int = 200
    batch_size: int = 16
    lr: float = 1e-3
    warmup: int = 20
    min_lr_ratio: float = 0.0
    eval_every: int = 25
    eval_windows: int = 128
    nonfinite_patience: int = 20
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every", "eval_windows", "nonfinite_patience"):
            positive_int(f"TrainConfig.{name}", getattr(self, name))
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"TrainConfig.warmup must be an int >= 0, got {self.warmup!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"TrainConfig.lr must be a positive number, got {self.lr!r}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"TrainConfig.min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")

    @classmethod
    def from_profile(cls, profile: Profile | None = None, **overrides) -> "TrainConfig":
        """Config sized by ``profile`` (default: the active one): the ``regimes_*`` sizes."""
        p = profile or active_profile()
        kw = dict(steps=p["regimes_steps"], batch_size=p["regimes_batch"], lr=p["regimes_lr"],
                  warmup=p["regimes_warmup"], eval_every=p["regimes_eval_every"],
                  eval_windows=p["regimes_eval_windows"])
        kw.update(overrides)
        return cls(**kw)

    def lr_at(self, step: int) -> float:
        """Learning rate at ``step`` (0-based): linear warm-up, then cosine decay."""
        if step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        t = (step - self.warmup) / max(1, self.steps - self.warmup - 1)
        return self.lr * (self.min_lr_ratio + (1 - self.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(t, 1.0))))


def model_config(profile: Profile | None = None, **overrides) -> GPTConfig:
    """The chapter's GPT shape from the ``regimes_*`` sizes of ``profile``."""
    p = profile or active_profile()
    kw = dict(vocab_size=p["regimes_vocab"], block_size=p["regimes_seq"], n_layer=p["regimes_layers"],
              n_head=p["regimes_heads"], n_embd=p["regimes_width"], init_std=p["regimes_init_std"])
    kw.update(overrides)
    return GPTConfig(**kw)


def corpus_from_profile(profile: Profile | None = None, seed: int = 0) -> Corpus:
    """The generated corpus sized by ``profile`` (vocabulary, train and validation tokens)."""
    p = profile or active_profile()
    return make_corpus(p["regimes_vocab"], p["regimes_train_tokens"], p["regimes_val_tokens"],
                       branching=p["regimes_branching"], seed=seed)


@dataclass
class RunResult:
    """What one training run produced.

    Attributes:
        regime: the regime's name.
        status: ``"ok"``, or what stopped or disturbed the run (non-finite loss, skipped steps).
        diverged_at: first step with a non-finite loss, or None.
        log: one row per step (step, lr, train_loss, grad_norm, step_time_s, tokens_per_s,
            peak_mem_mb, scale, skipped, unchanged); ``train_loss`` is the FP32 cross-entropy of
            the step's logits (:func:`fp32_cross_entropy`; the model's own loss where that was
            not finite); CUDA memory and scale are None where not applicable; ``unchanged`` is
            the fraction of stored weight elements the step left exactly as they were (the host
            time of the copy it needs is left out of the step time).
        val: one row per evaluation (step, val_loss); a run stopped on non-finite losses is
            evaluated once more at the step it stopped.
        tokens_per_step: batch size times sequence length.
        state_bytes: bytes of optimizer state (and FP32 masters) after the run.
        param_bytes: bytes of the model's parameters.
        grad_bytes: bytes of the gradients the last step held (the model's, and the FP32
            masters' where there are any), counted from the tensors.
        extra: ``first_nonfinite`` (step, the model's state and the batch of the first step
            whose loss was not finite: replayable), ``activation_max`` (with
            ``watch_activations``: per step and leaf module, the largest |output|).
    """

    regime: str
    status: str
    diverged_at: int | None
    log: pd.DataFrame
    val: pd.DataFrame
    tokens_per_step: int
    state_bytes: int = 0
    param_bytes: int = 0
    grad_bytes: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def final_train_loss(self) -> float:
        """Mean train loss over the last 10% of the logged steps (NaN if the last one is not finite)."""
        if self.log.empty:
            return float("nan")
        tail = self.log["train_loss"].iloc[-max(1, len(self.log) // 10):]
        return float(tail.mean())

    @property
    def final_val_loss(self) -> float | None:
        """Validation loss at the last evaluation (None if there was none)."""
        return float(self.val["val_loss"].iloc[-1]) if len(self.val) else None


def global_grad_norm(params) -> float:
    """L2 norm of all gradients together, computed in FP32 (inf/NaN if any gradient is)."""
    sq = [p.grad.detach().float().pow(2).sum() for p in params if p.grad is not None]
    return float(torch.stack(sq).sum().sqrt()) if sq else 0.0


@torch.no_grad()
def evaluate(model: GPT, x: torch.Tensor, y: torch.Tensor, setup, chunk: int = 64) -> float:
    """Mean cross-entropy of ``model`` on windows ``(x, y)``: forward under ``setup``'s autocast and
    parameter dtype, the cross-entropy of the logits in FP32."""
    model.eval()
    total, n = 0.0, 0
    for i in range(0, len(x), chunk):
        with setup.autocast():
            logits, _ = model(x[i:i + chunk])
        # the loss itself in FP32, so that every regime is scored with the same arithmetic
        yi = y[i:i + chunk]
        total += fp32_cross_entropy(logits, yi) * yi.numel()
        n += yi.numel()
    model.train()
    return total / n


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_regime(regime: str | Regime, *, corpus: Corpus | None = None, config: TrainConfig | None = None,
                 model_cfg: GPTConfig | None = None, device: str | torch.device | None = None,
                 profile: Profile | None = None, cpu_threads: int | None = 1,
                 watch_activations: bool = False) -> RunResult:
    """Train a fresh, seeded GPT under ``regime`` and return its :class:`RunResult`.

    Args:
        regime: a name from ``REGIMES`` (or a :class:`Regime`).
        corpus: the data (default: :func:`corpus_from_profile`).
        config: hyperparameters (default: ``TrainConfig.from_profile``).
        model_cfg: model shape (default: :func:`model_config`).
        device: 'cpu' or 'cuda' (default: CUDA when available).
        profile: sizes for the defaults (default: the active profile).
        cpu_threads: intra-op threads on a CPU during the run (restored afterwards); one by
            default: these models are too small to gain from more, and a single thread keeps
            step times steady on a shared machine. None keeps torch's setting.
        watch_activations: log, per step, the largest |output| of every leaf module (forward
            hooks) in ``extra["activation_max"]``: the growth that precedes an overflow.
    """
    r = get_regime(regime) if isinstance(regime, str) else regime
    if not isinstance(r, Regime):
        raise TypeError(f"regime must be a name or a Regime, got {type(regime).__name__}; valid: {list(REGIMES)}")
    dev = check_device(device or default_device())
    setup = r.setup(dev)
    corpus = corpus or corpus_from_profile(profile)
    cfg = config or TrainConfig.from_profile(profile)
    mcfg = model_cfg or model_config(profile)
    if mcfg.vocab_size < corpus.source.vocab_size:
        raise ValueError(f"model vocab_size {mcfg.vocab_size} < corpus vocabulary {corpus.source.vocab_size}")

    if cpu_threads is not None and (not isinstance(cpu_threads, int) or cpu_threads < 1):
        raise ValueError(f"cpu_threads must be a positive int or None, got {cpu_threads!r}")
    before, threads = torch.get_float32_matmul_precision(), torch.get_num_threads()
    if r.tf32:
        torch.set_float32_matmul_precision("high")
    if dev.type == "cpu" and cpu_threads is not None:
        torch.set_num_threads(cpu_threads)
    try:
        return _train(r, setup, corpus, cfg, mcfg, dev, watch_activations)
    finally:
        torch.set_float32_matmul_precision(before)
        torch.set_num_threads(threads)


def _watch(model: torch.nn.Module, sink: list[dict]) -> list:
    """Forward hooks recording each leaf module's largest |output| (inf when it overflowed) into ``sink``."""
    def hook(name):
        def f(module, inputs, out):
            if module.training and isinstance(out, torch.Tensor) and out.is_floating_point():
                sink.append({"module": name, "max abs": float(out.detach().abs().max())})
        return f
    return [m.register_forward_hook(hook(n)) for n, m in model.named_modules()
            if n and not list(m.children())]


def _train(r: Regime, setup, corpus: Corpus, cfg: TrainConfig, mcfg: GPTConfig, dev: torch.device,
           watch_activations: bool = False) -> RunResult:
    torch.manual_seed(cfg.seed)
    model = GPT(mcfg).to(dev)  # initialised in FP32 (identical for every regime), then cast
    model = model.to(setup.param_dtype)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(r, params, cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    vx, vy = corpus.val_windows(mcfg.block_size, cfg.eval_windows)
    vx, vy = vx.to(dev), vy.to(dev)
    tokens = cfg.batch_size * mcfg.block_size
    n_params = sum(p.numel() for p in params)
    scaler = setup.scaler
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)

    rows, vals, extra = [], [], {}
    acts: list[dict] = []
    handles = _watch(model, acts) if watch_activations else []
    status, diverged_at, bad_run = "ok", None, 0
    for step in range(cfg.steps):
        lr = cfg.lr_at(step) * r.lr_scale
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = corpus.batch("train", cfg.batch_size, mcfg.block_size, gen, dev)
        _sync(dev)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        n_acts = len(acts)
        with setup.autocast():
            logits, loss = model(x, y)
        for a in acts[n_acts:]:
            a["step"] = step
        loss_val = float(loss.detach().float())
        finite = math.isfinite(loss_val)
        if not finite and diverged_at is None:  # keep what is needed to replay this forward
            extra["first_nonfinite"] = {"step": step, "x": x.detach().cpu(), "y": y.detach().cpu(),
                                        "state_dict": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}
        if not finite:
            diverged_at = step if diverged_at is None else diverged_at
            bad_run += 1
        else:
            bad_run = 0
        if not finite and not scaler.is_enabled():
            rows.append(_row(step, lr, loss_val, float("nan"), time.perf_counter() - t0, tokens, dev, None, None))
            status = f"non-finite loss at step {step}: stopped"
            vals.append({"step": step, "val_loss": evaluate(model, vx, vy, setup)})  # the model it stopped with
            break
        scaler.scale(loss).backward()
        if scaler.is_enabled():
            scaler.unscale_(opt)
        gnorm = global_grad_norm(params)
        tc = time.perf_counter()
        before = [p.detach().clone() for p in params]  # for the "unchanged" column, not timed
        t0 += time.perf_counter() - tc
        scaler.step(opt)
        scaler.update()
        _sync(dev)
        dt = time.perf_counter() - t0
        if finite:  # log every regime's loss in the same arithmetic (see fp32_cross_entropy), outside the timing
            loss_val = fp32_cross_entropy(logits, y)
        # A GradScaler skips the step exactly when an unscaled gradient is inf/NaN.
        skipped = (not math.isfinite(gnorm)) if scaler.is_enabled() else None
        rows.append(_row(step, lr, loss_val, gnorm, dt, tokens, dev,
                         scaler.get_scale() if scaler.is_enabled() else None, skipped))
        # fraction of the stored weights the step left exactly as they were (rounded-away updates)
        same = torch.stack([(p.detach() == b).sum() for p, b in zip(params, before)]).sum()
        rows[-1]["unchanged"] = int(same) / n_params
        if bad_run >= cfg.nonfinite_patience:
            status = (f"non-finite loss from step {step - bad_run + 1}, {bad_run} steps in a row: stopped")
            vals.append({"step": step, "val_loss": evaluate(model, vx, vy, setup)})
            break
        if (step + 1) % cfg.eval_every == 0 or step == cfg.steps - 1:
            vals.append({"step": step, "val_loss": evaluate(model, vx, vy, setup)})

    for h in handles:
        h.remove()
    if watch_activations:
        extra["activation_max"] = pd.DataFrame(acts, columns=["step", "module", "max abs"])
    log = pd.DataFrame(rows)
    if status == "ok" and scaler.is_enabled():
        n_skip = int(log["skipped"].sum())
        if n_skip:
            status = f"ok, {n_skip} steps skipped"
    if status == "ok" and diverged_at is not None:
        status = f"non-finite loss at step {diverged_at}, recovered"
    from amp_docs_lib.regimes.optimizers import gradient_bytes, optimizer_state_bytes

    return RunResult(r.name, status, diverged_at, log, pd.DataFrame(vals, columns=["step", "val_loss"]), tokens,
                     state_bytes=optimizer_state_bytes(opt),
                     param_bytes=sum(p.numel() * p.element_size() for p in params),
                     grad_bytes=gradient_bytes(params, opt), extra=extra)


def allocator_check(regime: str | Regime, *, corpus: Corpus | None = None, config: TrainConfig | None = None,
                    model_cfg: GPTConfig | None = None, device: str | torch.device | None = None,
                    profile: Profile | None = None) -> dict[str, int]:
    """What the allocator holds for one regime's training state, beside what the tensors count.

    Builds the regime's model and optimizer and takes one training step inside ``torch.profiler``
    with its memory record on: every allocation and free the allocator makes is logged, so what
    the step allocated and freed (activations, the masters' FP32 gradients, the GradScaler's
    bookkeeping) nets out and ``allocated`` is what a run keeps between steps. ``counted`` adds up
    the storages of the tensors themselves: parameters, gradients, optimizer state (step counters
    and per-group tensors included) and FP32 masters, each rounded up to the allocator's block
    (512 bytes on CUDA, none on the CPU); ``buffers`` the model's non-parameter buffers (the
    allocator holds those too). The two agree exactly when the counting misses nothing.
    """
    from torch.profiler import ProfilerActivity, profile as torch_profile

    from amp_docs_lib.core.profiling import quiet_stderr

    r = get_regime(regime) if isinstance(regime, str) else regime
    if not isinstance(r, Regime):
        raise TypeError(f"regime must be a name or a Regime, got {type(regime).__name__}; valid: {list(REGIMES)}")
    dev = check_device(device or default_device())
    corpus = corpus or corpus_from_profile(profile)
    cfg = config or TrainConfig.from_profile(profile)
    mcfg = model_cfg or model_config(profile)

    def one_step():
        setup = r.setup(dev)
        torch.manual_seed(cfg.seed)
        model = GPT(mcfg).to(dev).to(setup.param_dtype)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = make_optimizer(r, params, cfg.lr)
        x, y = corpus.batch("train", cfg.batch_size, mcfg.block_size, torch.Generator().manual_seed(cfg.seed + 1), dev)
        with setup.autocast():
            _, loss = model(x, y)
        setup.scaler.scale(loss).backward()
        setup.scaler.step(opt)
        setup.scaler.update()
        _sync(dev)
        return model, params, opt  # everything else the step made is freed when this returns

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # allocations on worker threads would be logged outside the record
    try:
        with quiet_stderr(), torch_profile(activities=activities, profile_memory=True) as prof:
            model, params, opt = one_step()
    finally:
        torch.set_num_threads(threads)
    usage = "self_device_memory_usage" if dev.type == "cuda" else "self_cpu_memory_usage"
    allocated = sum(getattr(e, usage) for e in prof.key_averages())
    # CUDA's caching allocator hands out blocks in multiples of 512 bytes; the CPU's, the bytes asked for.
    block = 512 if dev.type == "cuda" else 1
    return {"allocated": int(allocated), "counted": _held_bytes(_state_tensors(params, opt), dev, block),
            "buffers": _held_bytes(model.buffers(), dev, block), "parameters": sum(p.numel() for p in params)}


def saved_for_backward(names: list[str], *, corpus: Corpus | None = None, config: TrainConfig | None = None,
                       model_cfg: GPTConfig | None = None, device: str | torch.device | None = None,
                       profile: Profile | None = None) -> pd.DataFrame:
    """What one forward saves for backward, per regime: the memory that exists only during a step.

    Records every tensor autograd saves (``torch.autograd.graph.saved_tensors_hooks``) in one
    forward and loss on a training batch, each distinct storage once. Columns: bytes saved in all,
    the part that is a copy of a parameter in another dtype (autocast casts each FP32 weight to
    BF16/FP16 for its matmul and saves that copy for backward), the part held in FP32 tensors,
    and the first two per parameter.
    """
    dev = check_device(device or default_device())
    corpus = corpus or corpus_from_profile(profile)
    cfg = config or TrainConfig.from_profile(profile)
    mcfg = model_cfg or model_config(profile)
    x, y = corpus.batch("train", cfg.batch_size, mcfg.block_size, torch.Generator().manual_seed(cfg.seed + 1), dev)
    rows = []
    for name in names:
        r = get_regime(name)
        setup = r.setup(dev)
        torch.manual_seed(cfg.seed)
        model = GPT(mcfg).to(dev).to(setup.param_dtype)
        params = [p for p in model.parameters() if p.requires_grad]

        def is_param_copy(t: torch.Tensor) -> bool:
            """A parameter's values in another dtype (a matmul may save the copy transposed)."""
            for p in params:
                if t.dtype == p.dtype or t.numel() != p.numel():
                    continue
                views = [t] if tuple(t.shape) == tuple(p.shape) else []
                if t.dim() == 2 and tuple(t.shape) == tuple(p.shape)[::-1]:
                    views.append(t.t())
                if any(torch.equal(v, p.detach().to(t.dtype)) for v in views):
                    return True
            return False

        saved: dict[int, torch.Tensor] = {}

        def pack(t: torch.Tensor) -> torch.Tensor:
            saved.setdefault(t.untyped_storage().data_ptr(), t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), setup.autocast():
            _, loss = model(x, y)
        stored = {p.untyped_storage().data_ptr() for p in params}
        total = sum(t.untyped_storage().nbytes() for ptr, t in saved.items() if ptr not in stored)
        copies = sum(t.untyped_storage().nbytes() for ptr, t in saved.items()
                     if ptr not in stored and is_param_copy(t))
        fp32 = sum(t.untyped_storage().nbytes() for ptr, t in saved.items()
                   if ptr not in stored and t.dtype == torch.float32)
        n = sum(p.numel() for p in params)
        rows.append({"regime": name, "saved for backward (bytes)": total, "of which parameter copies (bytes)": copies,
                     "of which FP32 (bytes)": fp32,
                     "saved (B/param)": total / n, "parameter copies (B/param)": copies / n})
        del loss
    return pd.DataFrame(rows)


def step_speed(names: list[str], *, corpus: Corpus | None = None, config: TrainConfig | None = None,
               model_cfg: GPTConfig | None = None, device: str | torch.device | None = None,
               profile: Profile | None = None, baseline: str = "fp32", rounds: int = 15,
               cpu_threads: int = 1) -> pd.DataFrame:
    """Training-step time per regime, timed interleaved by the library's harness (:mod:`amp_docs_lib.core.timing`).

    One model and optimizer per regime take the same batch step after step (forward under the
    regime's autocast, scaled backward, optimizer step), timed in interleaved rounds so a busy
    machine slows every regime alike. Per regime: median step time and its IQR, the median of the
    per-round speed ratios ``baseline / regime`` with its distribution-free interval, and the
    harness's verdict ("faster", "slower", or "no difference resolved" when the interval holds 1).
    """
    from amp_docs_lib.core.timing import interleaved

    dev = check_device(device or default_device())
    corpus = corpus or corpus_from_profile(profile)
    cfg = config or TrainConfig.from_profile(profile)
    mcfg = model_cfg or model_config(profile)
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not among the regimes timed: {names}")
    x, y = corpus.batch("train", cfg.batch_size, mcfg.block_size, torch.Generator().manual_seed(cfg.seed + 1), dev)

    def stepper(name: str):
        r = get_regime(name)
        setup = r.setup(dev)
        torch.manual_seed(cfg.seed)
        model = GPT(mcfg).to(dev).to(setup.param_dtype)
        opt = make_optimizer(r, [p for p in model.parameters() if p.requires_grad], 0.0)  # timed, not trained
        scaler = setup.scaler

        def step():
            opt.zero_grad(set_to_none=True)
            with setup.autocast():
                _, loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return step

    timed = interleaved({n: stepper(n) for n in names}, baseline=baseline, device=dev, rounds=rounds,
                        num_threads=cpu_threads if dev.type == "cpu" else None)
    rows = []
    for n in names:
        t = timed.timings[n]
        row = {"regime": n, "median step (ms)": 1e3 * t.median_s, "IQR (ms)": 1e3 * t.iqr_s,
               f"speed vs {baseline} (x)": None, "interval": None, "verdict": None}
        if n != baseline:
            c = timed.compare(n)
            row.update({f"speed vs {baseline} (x)": c.ratio, "interval": f"[{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]",
                        "verdict": c.verdict})
        rows.append(row)
    return pd.DataFrame(rows, dtype=object)


def _held_bytes(tensors, device: torch.device, block: int = 1) -> int:
    """Bytes ``device``'s allocator holds for ``tensors``: each distinct storage on ``device`` once
    (views share theirs), rounded up to the allocator's ``block``. Tensors on another device are not
    that allocator's: ``AdamW(foreach=False)``, neither fused nor capturable, keeps its ``step``
    counters on the CPU while the parameters are on the GPU (torch/optim/adam.py, ``_init_group``:
    "Deliberately host `step` on CPU if both capturable and fused are off")."""
    device = torch.device(device)
    storages = {}
    for t in tensors:
        if t.device.type == device.type and (device.index is None or t.device.index == device.index):
            s = t.untyped_storage()
            storages[s._cdata] = s.nbytes()  # the storage itself: data_ptr is 0 for every meta tensor
    return sum(-(-n // block) * block for n in storages.values())


def _state_tensors(params, opt) -> list[torch.Tensor]:
    """Every tensor a run keeps: parameters and gradients, masters and theirs, optimizer state, per-group tensors."""
    from amp_docs_lib.regimes.optimizers import MasterWeights

    inner = opt.optimizer if isinstance(opt, MasterWeights) else opt
    out = [*params, *(p.grad for p in params if p.grad is not None)]
    if isinstance(opt, MasterWeights):
        out += [*opt.masters, *(m.grad for m in opt.masters if m.grad is not None)]
    out += [t for st in inner.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
    out += [v for g in inner.param_groups for k, v in g.items() if k != "params" and isinstance(v, torch.Tensor)]
    return out


def fp32_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Cross-entropy of ``logits`` computed in FP32, whatever dtype the model computed its own loss in.

    The GPT computes ``F.cross_entropy`` in its logits' dtype (``gpt.py``), so a BF16-parameter
    model's own loss is a BF16 computation; the log and ``evaluate`` use FP32 for every regime.
    """
    with torch.no_grad():
        return float(F.cross_entropy(logits.detach().float().reshape(-1, logits.size(-1)), targets.reshape(-1)))


def _row(step, lr, loss, gnorm, dt, tokens, dev, scale, skipped) -> dict:
    return {"step": step, "lr": lr, "train_loss": loss, "grad_norm": gnorm, "step_time_s": dt,
            "tokens_per_s": tokens / dt if dt > 0 else None,
            "peak_mem_mb": torch.cuda.max_memory_allocated(dev) / 2**20 if dev.type == "cuda" else None,
            "scale": scale, "skipped": skipped}


def run_regimes(names: list[str] | None = None, *, device: str | torch.device | None = None,
                profile: Profile | None = None, corpus: Corpus | None = None,
                config: TrainConfig | None = None) -> dict[str, RunResult]:
    """Train one model per regime (default: every regime available on the device), same data and seed."""
    dev = check_device(device or default_device())
    names = list(names) if names is not None else regimes_for(dev.type)
    corpus = corpus or corpus_from_profile(profile)
    return {n: train_regime(n, corpus=corpus, config=config, device=dev, profile=profile) for n in names}


def summary_table(results: dict[str, RunResult], baseline: str = "fp32", skip_first: int = 5) -> pd.DataFrame:
    """One row per run: status, final losses, divergence step, speed and memory, relative to ``baseline``.

    Mean step time and tokens/s leave out the first ``skip_first`` steps (warm-up of kernels
    and allocator). Cells that do not apply (CUDA memory on a CPU, a baseline that did not run)
    are None.
    """
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict of RunResult")
    base = results.get(baseline)

    def mean_time(res: RunResult) -> float | None:
        t = res.log["step_time_s"].iloc[skip_first:] if len(res.log) > skip_first else res.log["step_time_s"]
        return float(t.mean()) if len(t) else None

    def peak(res: RunResult) -> float | None:
        m = res.log["peak_mem_mb"].dropna() if "peak_mem_mb" in res.log else []
        return float(m.max()) if len(m) else None

    rows = []
    for name, res in results.items():
        t = mean_time(res)
        tb = mean_time(base) if base is not None else None
        pm, pb = peak(res), (peak(base) if base is not None else None)
        rows.append({
            "regime": name, "what": REGIMES[name].label, "status": res.status,
            "steps run": len(res.log),
            "final train loss": res.final_train_loss,
            "final val loss": res.final_val_loss,
            "diverged at step": res.diverged_at,
            "skipped steps": int(res.log["skipped"].sum()) if res.log["skipped"].notna().any() else None,
            "mean step (ms)": None if t is None else 1e3 * t,
            "tokens/s": None if t is None else res.tokens_per_step / t,
            "speed vs " + baseline: None if (t is None or tb is None) else tb / t,
            "peak CUDA mem (MiB)": pm,
            "mem vs " + baseline: None if (pm is None or pb is None) else pm / pb,
            "optimizer state (MiB)": res.state_bytes / 2**20,
        })
    return pd.DataFrame(rows, dtype=object)  # object columns keep None (n/a) apart from NaN


def with_steps(config: TrainConfig, steps: int) -> TrainConfig:
    """``config`` with a different number of steps (eval cadence kept, warm-up capped)."""
    return replace(config, steps=steps, warmup=min(config.warmup, max(0, steps - 1)),
                   eval_every=min(config.eval_every, steps))


def replay_scale(log: pd.DataFrame, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000) -> list[float]:
    """The scale sequence the documented GradScaler rule gives for the run's skipped steps.

    ``log["skipped"]`` is measured from the gradients (a step is skipped when an unscaled
    gradient is inf/NaN); replaying :func:`amp_docs_lib.amp.grad_scaler.update_scale` over it
    predicts the scale after every step, to compare with the scale the run recorded.
    """
    from amp_docs_lib.amp.grad_scaler import update_scale

    if "skipped" not in log or log["skipped"].isna().any():
        raise ValueError("replay_scale needs a log with a 'skipped' flag on every step (a GradScaler run)")
    scale, tracker, out = init_scale, 0, []
    for skipped in log["skipped"]:
        scale, tracker = update_scale(scale, tracker, bool(skipped), growth_factor, backoff_factor, growth_interval)
        out.append(scale)
    return out


def naive_fp16_first_step(corpus: Corpus | None = None, config: TrainConfig | None = None,
                          model_cfg: GPTConfig | None = None, profile: Profile | None = None) -> dict:
    """Why naive FP16 + AdamW breaks: one step of ``torch.optim.AdamW`` on an FP16 copy of the model.

    Returns AdamW's ``eps`` as FP16 stores it, the fraction of second-moment entries that are
    zero after the step (``(1 - beta2) * grad**2`` flushed to zero in FP16), the fraction of
    parameters that became non-finite, and whether the non-finite ones are exactly those
    whose second moment is zero (the update then divides by ``sqrt(0) + 0``).
    """
    corpus = corpus or corpus_from_profile(profile)
    cfg = config or TrainConfig.from_profile(profile)
    mcfg = model_cfg or model_config(profile)
    torch.manual_seed(cfg.seed)
    model = GPT(mcfg).half()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr_at(0), foreach=False, weight_decay=0.0)
    x, y = corpus.batch("train", cfg.batch_size, mcfg.block_size, torch.Generator().manual_seed(cfg.seed + 1))
    _, loss = model(x, y)
    loss.backward()
    grads_zero = sum(int((p.grad == 0).sum()) for p in model.parameters())
    opt.step()
    n = sum(p.numel() for p in model.parameters())
    v_zero = torch.cat([(opt.state[p]["exp_avg_sq"] == 0).flatten() for p in model.parameters()])
    bad = torch.cat([(~torch.isfinite(p.detach())).flatten() for p in model.parameters()])
    return {"eps": 1e-8, "eps in fp16": float(torch.tensor(1e-8, dtype=torch.float16)),
            "first loss": float(loss.detach().float()), "gradient entries exactly zero": grads_zero / n,
            "second moment zero": float(v_zero.float().mean()), "parameters non-finite": float(bad.float().mean()),
            "non-finite exactly where second moment is zero": bool(torch.equal(bad, v_zero))}
