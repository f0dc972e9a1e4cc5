"""A corpus generated on the spot: a seeded second-order Markov source with a known entropy.

The training-regimes chapter needs text a small GPT can learn, with no download,
and a loss floor that is *computed*, not guessed. ``MarkovSource`` draws, for every
context of two tokens ``(a, b)``, a sparse next-token distribution (``branching``
successors with Dirichlet weights) mixed with a little uniform noise, which makes the
chain irreducible and aperiodic. Its stationary distribution over contexts is computed
by power iteration, and from it the exact entropies that bound any model's loss:

* ``entropy_rate``: :math:`H(X_{t+1} \\mid X_{t-1}, X_t)`, the best loss per token once
  two tokens of context are visible;
* ``bigram_entropy``: :math:`H(X_{t+1} \\mid X_t)`, the best a model that looks only at the
  current token can do;
* ``window_floor(T)``: the best mean loss over a window of ``T`` targets, where the first
  target sees one token of context and the others two.

A model trained on ``Corpus.train`` and evaluated on ``Corpus.val`` (an independent
draw from the same source) cannot beat these numbers except by sampling noise;
``Corpus.oracle_loss`` gives the source's own loss on exactly the validation windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch


def _check_int(name: str, v, lo: int = 1) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
    return v


@dataclass(frozen=True)
class MarkovSource:
    """A seeded second-order Markov source over ``vocab_size`` tokens.

    Args:
        vocab_size: number of distinct tokens.
        branching: successors with non-negligible probability per two-token context.
        alpha: Dirichlet concentration of the successor weights (small: peaked).
        noise: probability mass spread uniformly over the whole vocabulary.
        seed: seed of the source's transition table.
    """

    vocab_size: int = 32
    branching: int = 4
    alpha: float = 0.5
    noise: float = 0.02
    seed: int = 0
    probs: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        _check_int("vocab_size", self.vocab_size, 2)
        _check_int("branching", self.branching)
        if self.branching > self.vocab_size:
            raise ValueError(f"branching ({self.branching}) must be <= vocab_size ({self.vocab_size})")
        if not (isinstance(self.alpha, (int, float)) and self.alpha > 0):
            raise ValueError(f"alpha must be a positive number, got {self.alpha!r}")
        if not (isinstance(self.noise, (int, float)) and 0 < self.noise <= 1):
            raise ValueError(f"noise must be in (0, 1], got {self.noise!r}")
        V = self.vocab_size
        rng = np.random.default_rng(self.seed)
        p = np.full((V, V, V), self.noise / V)
        for a in range(V):
            for b in range(V):
                succ = rng.choice(V, size=self.branching, replace=False)
                p[a, b, succ] += (1 - self.noise) * rng.dirichlet([self.alpha] * self.branching)
        object.__setattr__(self, "probs", p)  # probs[a, b, c] = P(next = c | previous two = a, b)

    def stationary(self, iters: int = 2000, tol: float = 1e-14) -> np.ndarray:
        """Stationary distribution over contexts, ``pi[a, b]`` (power iteration)."""
        V = self.vocab_size
        pi = np.full((V, V), 1.0 / V**2)
        for _ in range(iters):
            new = np.einsum("ab,abc->bc", pi, self.probs)  # (a, b) -> (b, c)
            if np.abs(new - pi).max() < tol:
                return new
            pi = new
        return pi

    @property
    def entropy_rate(self) -> float:
        """:math:`H(X_{t+1} | X_{t-1}, X_t)` in nats: the loss floor with two tokens of context."""
        pi = self.stationary()
        h = -(self.probs * np.log(self.probs)).sum(-1)
        return float((pi * h).sum())

    def bigram_probs(self) -> np.ndarray:
        """``P(next = c | current = b)`` under the stationary distribution, shape (V, V)."""
        pi = self.stationary()
        joint = np.einsum("ab,abc->bc", pi, self.probs)
        return joint / joint.sum(-1, keepdims=True)

    @property
    def bigram_entropy(self) -> float:
        """:math:`H(X_{t+1} | X_t)` in nats: the floor of a model that sees only the current token."""
        pi = self.stationary()
        marg = pi.sum(0)  # P(current = b)
        q = self.bigram_probs()
        return float(-(marg[:, None] * q * np.log(q)).sum())

    @property
    def unigram_entropy(self) -> float:
        """:math:`H(X)` in nats under the stationary distribution: the loss of a model that ignores context."""
        marg = self.stationary().sum(0)
        return float(-(marg * np.log(marg)).sum())

    def window_floor(self, block_size: int) -> float:
        """Best achievable mean loss over ``block_size`` next-token targets of a window."""
        _check_int("block_size", block_size)
        return (self.bigram_entropy + (block_size - 1) * self.entropy_rate) / block_size

    def sample(self, n: int, seed: int) -> np.ndarray:
        """``n`` tokens of the chain started from its stationary distribution (seeded)."""
        _check_int("n", n, 2)
        V = self.vocab_size
        rng = np.random.default_rng(seed)
        pi = self.stationary().ravel()
        out = np.empty(n, dtype=np.int64)
        ab = rng.choice(V * V, p=pi / pi.sum())
        out[0], out[1] = divmod(ab, V)
        cdf = np.cumsum(self.probs, axis=-1)
        u = rng.random(n)
        for t in range(2, n):
            row = cdf[out[t - 2], out[t - 1]]
            out[t] = min(int(np.searchsorted(row, u[t] * row[-1], side="right")), V - 1)
        return out


@dataclass
class Corpus:
    """Train and validation token streams from one :class:`MarkovSource` (independent draws)."""

    source: MarkovSource
    train: torch.Tensor
    val: torch.Tensor

    def batch(self, split: str, batch_size: int, block_size: int, generator: torch.Generator,
              device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """Random windows of ``split`` ('train' or 'val'): inputs and next-token targets."""
        data = self._split(split)
        ix = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
        x = torch.stack([data[i:i + block_size] for i in ix.tolist()])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix.tolist()])
        return x.to(device), y.to(device)

    def val_windows(self, block_size: int, n_windows: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The fixed validation set: ``n_windows`` evenly spaced windows (the same for every run)."""
        _check_int("n_windows", n_windows)
        last = len(self.val) - block_size - 1
        if last < 1:
            raise ValueError(f"validation stream ({len(self.val)} tokens) is shorter than a window")
        starts = np.linspace(0, last, n_windows).astype(int)
        x = torch.stack([self.val[i:i + block_size] for i in starts])
        y = torch.stack([self.val[i + 1:i + block_size + 1] for i in starts])
        return x, y

    def oracle_loss(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """The source's own cross-entropy on windows ``(x, y)``: what a perfect model scores."""
        p = self.source.probs
        q1 = self.source.bigram_probs()
        xn, yn = x.cpu().numpy(), y.cpu().numpy()
        first = q1[xn[:, 0], yn[:, 0]]
        rest = p[xn[:, :-1], xn[:, 1:], yn[:, 1:]]  # context (x[t-1], x[t]) -> y[t] for t >= 1
        return float(-(np.log(first).sum() + np.log(rest).sum()) / yn.size)

    def _split(self, split: str) -> torch.Tensor:
        if split == "train":
            return self.train
        if split == "val":
            return self.val
        raise ValueError(f"unknown split {split!r}; valid splits: ['train', 'val']")

    def describe(self) -> dict:
        """Sizes and exact entropies (nats) of this corpus, for a summary table."""
        s = self.source
        return {"vocab": s.vocab_size, "branching": s.branching, "train tokens": len(self.train),
                "val tokens": len(self.val), "uniform loss ln(V)": math.log(s.vocab_size),
                "bigram floor H(X|prev)": s.bigram_entropy, "entropy rate H(X|prev 2)": s.entropy_rate}


def make_corpus(vocab_size: int = 32, train_tokens: int = 200_000, val_tokens: int = 20_000, *,
                branching: int = 4, alpha: float = 0.5, noise: float = 0.02, seed: int = 0) -> Corpus:
    """Generate a :class:`Corpus`: the source is seeded by ``seed``; train and val by ``seed+1``, ``seed+2``."""
    _check_int("train_tokens", train_tokens, 2)
    _check_int("val_tokens", val_tokens, 2)
    src = MarkovSource(vocab_size, branching, alpha, noise, seed)
    train = torch.from_numpy(src.sample(train_tokens, seed + 1))
    val = torch.from_numpy(src.sample(val_tokens, seed + 2))
    return Corpus(src, train, val)
