"""A small, readable GPT (nanoGPT-style) for the mixed-precision experiments.

Token + position embeddings, ``n_layer`` pre-LayerNorm blocks (causal
self-attention through ``F.scaled_dot_product_attention``, then a GELU MLP),
a final LayerNorm and a language-model head (tied to the token embedding by
default). Sizes come from the active profile: ``GPT.from_profile()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from amp_docs_lib.core.checks import positive_int
from amp_docs_lib.core.profiles import Profile, active_profile


@dataclass(frozen=True)
class GPTConfig:
    """Shape of the model: vocabulary, context length, depth, heads and width.

    ``init_std`` is the standard deviation of the normal initialisation of every Linear
    and Embedding weight (nanoGPT's 0.02 by default).
    """

    vocab_size: int = 128
    block_size: int = 32
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0
    tie_weights: bool = True
    init_std: float = 0.02

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            positive_int(f"GPTConfig.{name}", getattr(self, name))
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if not (isinstance(self.init_std, (int, float)) and self.init_std > 0):
            raise ValueError(f"init_std must be a positive number, got {self.init_std!r}")

    @classmethod
    def from_profile(cls, profile: Profile | None = None, **overrides) -> "GPTConfig":
        """Config sized by ``profile`` (default: the active one): gpt_seq/layers/heads/width/vocab."""
        p = profile or active_profile()
        kw = dict(vocab_size=p["gpt_vocab"], block_size=p["gpt_seq"], n_layer=p["gpt_layers"],
                  n_head=p["gpt_heads"], n_embd=p["gpt_width"])
        kw.update(overrides)
        return cls(**kw)


class Attention(nn.Module):
    """The attention kernel, softmax(QK^T/sqrt(d)) V with a causal mask (a module so hooks see it)."""

    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        p = self.dropout if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention: one Linear for Q, K, V; one output projection."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.attn = Attention(cfg.dropout)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = self.attn(q, k, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward: Linear(4x) -> GELU -> Linear."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """The language model; ``forward(idx, targets=None)`` returns ``(logits, loss)``."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        if not isinstance(cfg, GPTConfig):
            raise TypeError(f"GPT expects a GPTConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            self.lm_head.weight = self.wte.weight
        self.apply(self._init_weights)

    def _init_weights(self, m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=self.cfg.init_std)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    @classmethod
    def from_profile(cls, profile: Profile | None = None, **overrides) -> "GPT":
        """A freshly initialised GPT sized by ``profile`` (default: the active one)."""
        return cls(GPTConfig.from_profile(profile, **overrides))

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        B, T = idx.shape
        if T > self.cfg.block_size:
            raise ValueError(f"sequence length {T} exceeds block_size {self.cfg.block_size}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


def random_batch(cfg: GPTConfig, batch: int, device: str | torch.device = "cpu", seed: int = 0):
    """A seeded batch of random token ids and next-token targets, shape (batch, block_size)."""
    g = torch.Generator().manual_seed(seed)
    data = torch.randint(0, cfg.vocab_size, (batch, cfg.block_size + 1), generator=g)
    return data[:, :-1].to(device), data[:, 1:].to(device)
