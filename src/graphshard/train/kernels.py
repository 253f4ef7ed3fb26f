"""Numba kernels of the walk-embedding trainer: sparse row optimisers, the skip-gram
negative-sampling loss, batched (gradients for torch-side tables) or pair by pair
(word2vec's plain SGD), and word2vec's subsampling of frequent nodes in walks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange

from .._util.jit import kernel
from ..sampling.kernels.rng import item_state, uniform

__all__ = ["adagrad_rows", "adam_rows", "pair_loss_grads", "reassoc_kernel", "sgd_rows",
           "sgns_grads", "sgns_pair_sgd", "subsample_walks"]


@kernel
def adagrad_rows(w, state, ids, grads, lr, eps):  # pragma: no cover - numba
    """Sparse Adagrad on unique rows ``ids`` of ``w`` (``state``: summed squared grads)."""
    for r in range(len(ids)):
        i = ids[r]
        for j in range(w.shape[1]):
            g = grads[r, j]
            s = state[i, j] + g * g
            state[i, j] = s
            w[i, j] -= lr * g / (np.sqrt(s) + eps)


@kernel
def adam_rows(w, m, v, ids, grads, lr, beta1, beta2, eps, step):  # pragma: no cover - numba
    """Lazy (sparse) Adam on unique rows ``ids`` of ``w``: ``m``, ``v`` (first and second
    moments) move only on those rows; ``step`` (1, 2, ...) is the table's shared step count
    behind the bias corrections (PGL's ``shared_adam``: one beta power per table)."""
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    rate = lr * np.sqrt(c2) / c1
    for r in range(len(ids)):
        i = ids[r]
        for j in range(w.shape[1]):
            g = grads[r, j]
            m[i, j] = beta1 * m[i, j] + (1.0 - beta1) * g
            v[i, j] = beta2 * v[i, j] + (1.0 - beta2) * g * g
            w[i, j] -= rate * m[i, j] / (np.sqrt(v[i, j]) + eps)


@kernel
def sgd_rows(w, ids, grads, lr):  # pragma: no cover - numba
    """Sparse SGD on unique rows ``ids`` of ``w``."""
    for r in range(len(ids)):
        for j in range(w.shape[1]):
            w[ids[r], j] -= lr * grads[r, j]


@kernel
def _log_sigmoid(x):  # pragma: no cover - numba
    return -np.log1p(np.exp(-x)) if x >= 0 else x - np.log1p(np.exp(x))


@kernel
def _sigmoid(x):  # pragma: no cover - numba
    if x >= 0:
        return np.float32(1.0) / (np.float32(1.0) + np.exp(-x))
    e = np.exp(x)
    return e / (np.float32(1.0) + e)


def reassoc_kernel(fn: Callable[..., Any]) -> Any:
    """:func:`~graphshard._util.jit.kernel` that may reassociate float sums (numba fastmath
    ``reassoc``/``contract`` only: no finite-math assumption), so the 128-wide dot products
    vectorise (benchmarks/TUNING.md).  Results are reproducible for one build on one CPU,
    not bit-equal across CPUs with other vector widths."""
    mod = __name__  # as kernel(): "graphshard..." under any import name, one on-disk cache
    fn.__module__ = mod[mod.index("graphshard."):] if "graphshard." in mod else mod
    return njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})(fn)


@reassoc_kernel
def sgns_pair_sgd(w_in, w_out, src, dst, neg, lr_first, lr_last):  # pragma: no cover
    """word2vec's skip-gram negative-sampling update, pair by pair in order: for pair p the
    context row ``w_out[dst[p]]`` (label 1) and each negative row (label 0) move by
    ``lr * (label - s(dot)) * w_in[src[p]]``, then the centre row moves by the summed
    ``lr * (label - s(dot)) * w_out[row]`` (read before its update).  A negative equal to
    the pair's context is skipped.  ``lr`` runs linearly from ``lr_first`` (first pair) to
    ``lr_last`` (last pair).  ``w_in`` and ``w_out`` may be one array (a shared table).
    Returns the mean loss of the pairs, each scored before its own update."""
    b, k, d = len(src), neg.shape[1], w_in.shape[1]
    slope = (lr_last - lr_first) / max(b - 1, 1)
    acc = np.empty(d, dtype=np.float32)
    loss = 0.0
    for p in range(b):
        lr = np.float32(lr_first + slope * p)
        s, c = src[p], dst[p]
        acc[:] = 0.0
        for q in range(k + 1):
            t = c if q == 0 else neg[p, q - 1]
            if q > 0 and t == c:
                continue
            dot = np.float32(0.0)
            for j in range(d):
                dot += w_in[s, j] * w_out[t, j]
            label = np.float32(1.0) if q == 0 else np.float32(0.0)
            loss -= _log_sigmoid(dot) if q == 0 else _log_sigmoid(-dot)
            g = lr * (label - _sigmoid(dot))
            for j in range(d):
                acc[j] += g * w_out[t, j]
                w_out[t, j] += g * w_in[s, j]
        for j in range(d):
            w_in[s, j] += acc[j]
    return loss / max(b, 1)


@kernel
def sgns_grads(u, i_src, i_dst, i_neg, grad):  # pragma: no cover - numba
    """Mean sigmoid skip-gram loss of a batch over gathered rows ``u``; adds its gradient
    into ``grad`` (zeros, shape of ``u``).  Pairs run in order: a fixed summation order."""
    b, k, d = len(i_src), i_neg.shape[1], u.shape[1]
    inv_b = np.float32(1.0 / b)
    loss = 0.0
    for p in range(b):
        s, t = i_src[p], i_dst[p]
        dot = np.float32(0.0)
        for j in range(d):
            dot += u[s, j] * u[t, j]
        loss -= _log_sigmoid(dot)
        g = (np.float32(1.0) / (np.float32(1.0) + np.exp(-dot)) - np.float32(1.0)) * inv_b
        for j in range(d):
            grad[s, j] += g * u[t, j]
            grad[t, j] += g * u[s, j]
        for q in range(k):
            n = i_neg[p, q]
            dot = np.float32(0.0)
            for j in range(d):
                dot += u[s, j] * u[n, j]
            loss -= _log_sigmoid(-dot)
            g = inv_b / (np.float32(1.0) + np.exp(-dot))
            for j in range(d):
                grad[s, j] += g * u[n, j]
                grad[n, j] += g * u[s, j]
    return loss / b


@kernel(parallel=True)
def subsample_walks(traces, col_offset, keep, seed, compact, out):  # pragma: no cover
    """word2vec's subsampling of frequent words, on walks: entry ``traces[i, a] = x``
    (a per-type ID; -1 is padding) stays with probability ``keep[col_offset[a] + x]``
    (``keep`` by global ID), drawn from the keyed state of (``seed``, walk ``i``) at step
    ``a``.  ``compact``: the kept entries of a walk move to its front, in order, and -1
    fills the rest (the window then reaches past dropped nodes, as word2vec's); otherwise a
    dropped entry becomes -1 in place.  Writes ``out`` (shape of ``traces``); returns the
    kept entries per walk."""
    n, length = traces.shape
    kept = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        st = item_state(seed, 0, i)
        o = 0
        for a in range(length):
            x = traces[i, a]
            if x >= 0 and uniform(st, a) < keep[col_offset[a] + x]:
                out[i, o if compact else a] = x
                o += 1
            elif not compact:
                out[i, a] = -1
        if compact:
            for a in range(o, length):
                out[i, a] = -1
        kept[i] = o
    return kept


@kernel
def pair_loss_grads(u, i_src, i_dst, i_neg, kind, margin, grad):  # pragma: no cover
    """Graph4Rec's pair losses over rows ``u`` (unique node representations): logits
    ``pos = u[src] . u[dst]`` and ``neg[k] = u[src] . u[neg[k]]``; ``kind`` 0: sigmoid,
    ``(mean BCE(pos, 1) + mean BCE(neg, 0)) / 2``; 1: hinge, ``mean relu(margin - pos +
    neg)`` over pairs and negatives; 2: nce, softmax cross-entropy of ``pos`` among
    ``[pos, neg]``, mean over pairs.  Adds the gradient into ``grad`` (zeros, shape of
    ``u``) in a fixed order; returns the loss."""
    b, k, d = len(i_src), i_neg.shape[1], u.shape[1]
    logits = np.empty(k + 1, dtype=np.float32)
    dl = np.empty(k + 1, dtype=np.float32)
    loss = 0.0
    for p in range(b):
        s = i_src[p]
        for q in range(k + 1):
            t = i_dst[p] if q == 0 else i_neg[p, q - 1]
            dot = np.float32(0.0)
            for j in range(d):
                dot += u[s, j] * u[t, j]
            logits[q] = dot
        if kind == 0:
            loss -= 0.5 * _log_sigmoid(logits[0]) / b
            dl[0] = (_sigmoid(logits[0]) - np.float32(1.0)) * np.float32(0.5 / b)
            for q in range(1, k + 1):
                loss -= 0.5 * _log_sigmoid(-logits[q]) / (b * k)
                dl[q] = _sigmoid(logits[q]) * np.float32(0.5 / (b * k))
        elif kind == 1:
            dl[0] = 0.0
            for q in range(1, k + 1):
                gap = margin - logits[0] + logits[q]
                if gap > 0:
                    loss += gap / (b * k)
                    dl[0] -= np.float32(1.0 / (b * k))
                    dl[q] = np.float32(1.0 / (b * k))
                else:
                    dl[q] = 0.0
        else:
            top = logits.max()
            z = 0.0
            for q in range(k + 1):
                z += np.exp(logits[q] - top)
            loss += (np.log(z) + top - logits[0]) / b
            for q in range(k + 1):
                dl[q] = np.float32(np.exp(logits[q] - top) / z / b)
            dl[0] -= np.float32(1.0 / b)
        for q in range(k + 1):
            t = i_dst[p] if q == 0 else i_neg[p, q - 1]
            g = dl[q]
            if g == 0:
                continue
            for j in range(d):
                gs = g * u[t, j]
                grad[t, j] += g * u[s, j]
                grad[s, j] += gs
    return loss
