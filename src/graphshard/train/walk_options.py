"""The hyper-parameters of :func:`~graphshard.train.walk_embed.train_walk_embedding`, as
one frozen, validated dataclass.

Unstable API (first pass of issue 7).

Example:
    >>> from graphshard.train.walk_options import WalkOptions
    >>> opts = WalkOptions(walk_len=8, win_size=2, lr_decay="linear", lr=0.025)
    >>> opts.final_lr  # word2vec's default end rate: lr * 1e-4
    2.5e-06
    >>> WalkOptions(optimizer="ftrl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    graphshard.errors.ValidationError: optimizer must be one of (...), got 'ftrl'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import ValidationError, check_choice
from ._walk_checks import (
    BOOLS,
    INT_RANGES,
    check_active,
    check_bool,
    check_float,
    check_hops,
    check_int,
    check_names,
)

__all__ = ["DEFAULT_LR", "GCL_LOSSES", "LOSS_TYPES", "LR_DECAYS", "NEG_DISTRIBUTIONS", "OPTIMIZERS",
           "SAGE_LAYERS", "WalkOptions"]

#: Valid ``optimizer`` values: sparse Adagrad, Adam (one step count per table, PGL's
#: ``shared_adam``) or SGD on the summed gradient of a batch, or ``"pair_sgd"``: plain SGD
#: after every pair, in order (word2vec's update; local graphs only).
OPTIMIZERS = ("adagrad", "adam", "sgd", "pair_sgd")

#: Valid ``loss_type`` values (Graph4Rec's): sigmoid cross-entropy, hinge with ``margin``,
#: and ``nce`` (softmax cross-entropy of the positive among itself and its negatives).
LOSS_TYPES = ("sigmoid", "hinge", "nce")

#: Valid ``neg_distribution`` values: negatives drawn uniformly over the context's node
#: type, or by ``degree ** 0.75`` (word2vec's unigram distribution).
NEG_DISTRIBUTIONS = ("uniform", "degree")

#: Valid ``sage_layer_type`` values (Graph4Rec's layer names).
SAGE_LAYERS = ("LightGCN", "GraphSAGE")

#: Valid ``lr_decay`` values: a constant rate, or word2vec's linear decay from ``lr`` to
#: ``end_lr`` over all walks of the run.
LR_DECAYS = ("none", "linear")

#: The default learning rate of each optimizer (``lr=None``): word2vec's 0.025 for
#: ``"pair_sgd"`` (applied to every pair), PGL's ``sparse_lr`` 0.1 for the others.
DEFAULT_LR = {"pair_sgd": 0.025, "adagrad": 0.1, "adam": 0.1, "sgd": 0.1}

#: Valid ``gcl_loss`` values (Graph4Rec's contrastive losses; None or ``""``: off).
GCL_LOSSES = ("simgcl_loss",)

#: Activations of GraphSAGE layers.
_ACTS = ("relu", "tanh", "sigmoid", "leaky_relu", "none")

#: Fields of the model (Graph4Rec's keys) a checkpoint records when not at their default.
_MODEL_FIELDS = ("loss_type", "margin", "init_range", "softsign", "sage_mode",
                 "sage_layer_type", "sage_alpha", "samples", "sage_act", "use_degree_norm",
                 "weighted_sample", "return_weight", "dense_lr", "slot_feature_lr", "slots",
                 "gcl_loss", "hcl")


@dataclass(frozen=True)
class WalkOptions:
    """Hyper-parameters of a skip-gram walk-embedding run (DeepWalk, metapath2vec).

    Validated once, when built; sizes are stored as ``int``, ``lr`` as ``float`` and the
    flags as ``bool`` (``metapath``, ``walk_len``, ``end_lr``, ``subsample``,
    ``exclude_pairs`` and ``neg_distribution`` as given).

    The defaults are DeepWalk's setting (issue 27): 80 walks of 40 nodes per node, a
    window of 10 shrunk at random, 5 negatives by degree ** 0.75, 128 dimensions,
    word2vec's subsampling at 1e-4, a context table and, on a local graph, word2vec's
    per-pair SGD at 0.025 with linear decay (``optimizer``, ``lr``, ``lr_decay`` and
    ``context_table`` are settled per run by :meth:`resolve`).  They reach DeepWalk's
    Micro-F1 on BlogCatalog (benchmarks/TUNING.md); Graph4Rec's example config (walks of
    8, window 2, Adagrad) is other values, set by its keys.  Subsampling is relative to
    the walk entries: on a small graph it drops most of them (``subsample=0`` there).

    Attributes:
        metapath: None (one edge type), a metapath ``"u2click2i-i2click2u"``, several
            separated by ``;`` (PGL's ``meta_path``; walks from each), or a list of them.
        walk_len: Nodes per walk.
        walk_times: Walks per start node and epoch.
        win_size: Skip-gram half window.
        neg_num: Negatives per pair, of the context's node type.
        emb_size: Embedding width.
        lr: Learning rate (the first one with ``lr_decay``); None (default): the
            optimizer's :data:`DEFAULT_LR` (0.025 for ``"pair_sgd"``, 0.1 for the others).
            ``"adagrad"`` and ``"sgd"`` apply it to the batch's summed gradient of the
            *mean* loss (so SGD's rate per pair is ``lr / batch_size``); ``"pair_sgd"`` to
            every pair (word2vec: 0.025).
        epochs: Passes.
        batch_size: Pairs per step (per negative draw with ``"pair_sgd"``).
        seed: Seed of initialisation, walks, pair order and negatives.
        optimizer: ``"adagrad"``, ``"adam"`` (lazy Adam, one step count per table: PGL's
            ``shared_adam``) or ``"sgd"`` (sparse, rows of the batch only, on a local graph
            or a DistGraph), or ``"pair_sgd"`` (word2vec's plain SGD after every
            pair, in order; local graphs only).  ``"auto"`` (default): ``"pair_sgd"`` on
            a local graph with the plain sigmoid model, ``"adagrad"`` on a DistGraph or
            with a model option (:meth:`resolve`).  So by default a local run and a
            DistGraph run train differently; name the optimizer to compare them.
        lr_decay: ``"none"`` (constant) or ``"linear"``: from ``lr`` down to ``end_lr`` in
            proportion to the walks trained over all epochs (word2vec's schedule; PGL's
            deepwalk decays polynomially to an end rate in the same way).  ``"auto"``
            (default): ``"linear"`` with ``"pair_sgd"``, ``"none"`` otherwise.
        end_lr: Last learning rate of ``"linear"`` (default ``lr * 1e-4``, word2vec's;
            resolved in :attr:`final_lr`).
        random_window: Shrink each centre's window to ``1..win_size`` at random, keyed by
            seed (word2vec's reduced window: near contexts weigh more, about half the pairs).
        subsample: word2vec's ``sample``: 0 (off) or a threshold ``t`` (1e-3 .. 1e-5) such
            that a node seen ``c`` times in the first epoch's ``T`` walk entries is kept with
            probability ``min(1, (sqrt(c / (t T)) + 1) t T / c)`` at each occurrence, before
            pairing (kept nodes close up, so windows reach further).  Counting walks the
            first epoch once more.  Resolved as a float in :attr:`sample`.
        exclude_pairs: Node-type pairs not trained (PGL's ``excluded_train_pair``).
        neg_distribution: ``"uniform"`` or ``"degree"`` (degree ** 0.75).
        walk_buffer: Walks generated, paired and shuffled together.
        context_table: Score contexts and negatives against a second, zero-initialised
            table per node type (word2vec's output vectors) instead of the shared one
            (PGL's); only the first tables are returned.  None (default): True on the
            sigmoid fast path, False with a model option (which needs one table).
        loss_type: ``"sigmoid"`` (default), ``"hinge"`` (``mean(relu(margin - pos +
            neg))``) or ``"nce"`` (softmax cross-entropy of the positive among itself and
            its negatives).  Anything but the default fast path (sigmoid, no model) trains
            through the torch model of :mod:`~graphshard.train._g4r_model`.
        margin: The hinge loss's margin.
        init_range: Tables start uniform in ``[-init_range, init_range]`` (None: in
            ``[-0.5, 0.5) / sqrt(emb_size)``).
        softsign: Apply ``x / (1 + |x|)`` to every node's input embedding (id row plus
            pooled slot features).
        sage_mode: Encode nodes with ``len(samples)`` graph layers over sampled
            neighbours (Graph4Rec's SageModel) before scoring pairs.
        sage_layer_type: ``"LightGCN"`` (sum of neighbours, no weights) or
            ``"GraphSAGE"`` (self and mean-of-neighbours linear maps, ``sage_act``).
        sage_alpha: Each layer's output is ``sage_alpha * input + (1 - sage_alpha) *
            layer`` (Graph4Rec's residual).
        samples: Neighbours sampled per node and hop in training (first hop first).
        infer_samples: The same for inference.
        sage_act: Activation of GraphSAGE layers (``relu``, ``tanh``, ``sigmoid``, ``none``).
        use_degree_norm: LightGCN sums scaled by ``1 / sqrt(deg(src) deg(dst))`` (degrees
            in the sampled subgraph).
        weighted_sample: Walks and neighbour sampling draw edges in proportion to the
            edge feature ``weight`` (needs one).
        return_weight: LightGCN / GraphSAGE aggregate neighbours scaled by their edge's
            ``weight`` (1 without one).
        dense_lr: Adam rate of the dense (GraphSAGE layer) parameters.
        slot_feature_lr: Rate of the slot-feature tables (their optimizer is ``optimizer``).
        slots: Node features used as slot features (integer IDs per node, a fixed width
            or ragged), each embedded by its own table and sum-pooled per node, then added
            to the node's id row (Graph4Rec).
        infer_batch_size: Nodes per inference batch of the slot features; ``sage_mode``
            infers layer-wise over the whole graph, so its embeddings do not depend on it.
        gcl_loss: ``"simgcl_loss"``: add SimGCL's contrastive loss on two noise-perturbed
            views of the batch's node representations (Graph4Rec's ``gcl_loss``;
            :mod:`~graphshard.train._g4r_contrast`); None (default), ``""`` or False: off.
        hcl: Add Graph4Rec's hierarchical contrastive loss: each sampled neighbour edge's
            endpoints, as input embeddings, against shuffled neighbours (needs
            ``sage_mode``).

    Raises:
        ValidationError: naming the field: a value of the wrong type (an integer field
            given ``1.5`` or ``"8"``, a flag given ``"false"``: never truncated or cast), out
            of range (sizes >= 1 and bounded as a config's keys, rates finite and > 0,
            ``subsample`` in [0, 1)), an unknown choice (``optimizer``, ``lr_decay``,
            ``neg_distribution``, ...), or an option set to other than its default where it
            does nothing (``end_lr`` without a linear decay, ``margin`` without the hinge
            loss, ``sage_*`` / ``samples`` without ``sage_mode``, ``slot_feature_lr``
            without ``slots``: :mod:`~graphshard.train._walk_checks`).

    Example:
        >>> opts = WalkOptions(metapath="u2i-i2u", walk_len=5, subsample=1e-4)
        >>> opts.sample, opts.win_size
        (0.0001, 10)
        >>> sorted(opts.checkpoint_params())[:4]
        ['batch_size', 'context_table', 'emb_size', 'end_lr']
        >>> WalkOptions(epochs=0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        graphshard.errors.ValidationError: ...: epochs must be an integer >= 1 and <= 1000000, got 0
    """

    metapath: Any = None
    walk_len: int = 40
    walk_times: int = 80
    win_size: int = 10
    neg_num: int = 5
    emb_size: int = 128
    lr: float | None = None
    epochs: int = 1
    batch_size: int = 512
    seed: int = 0
    optimizer: str = "auto"
    lr_decay: str = "auto"
    end_lr: float | None = None
    random_window: bool = True
    subsample: float = 1e-4
    exclude_pairs: Sequence[Any] = ()
    neg_distribution: str = "degree"
    walk_buffer: int = 5000
    context_table: bool | None = None
    loss_type: str = "sigmoid"
    margin: float = 2.0
    init_range: float | None = None
    softsign: bool = False
    sage_mode: bool = False
    sage_layer_type: str = "LightGCN"
    sage_alpha: float = 0.8
    samples: Sequence[int] = (3, 2)
    infer_samples: Sequence[int] = (10, 10)
    sage_act: str = "relu"
    use_degree_norm: bool = False
    weighted_sample: bool = False
    return_weight: bool = False
    dense_lr: float = 0.0005
    slot_feature_lr: float = 0.001
    slots: Sequence[str] = ()
    infer_batch_size: int = 30000
    gcl_loss: str | bool | None = None
    hcl: bool = False
    #: The last learning rate of ``"linear"`` (``end_lr``, or ``lr * 1e-4``).
    final_lr: float = field(init=False, repr=False, compare=False)
    #: ``subsample`` as a float (0.0: off).
    sample: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.optimizer != "auto" and self.optimizer not in OPTIMIZERS:
            raise ValidationError(f"optimizer must be one of {('auto', *OPTIMIZERS)}, got "
                                  f"{self.optimizer!r}", field="optimizer",
                                  value=self.optimizer)
        if self.lr_decay != "auto" and self.lr_decay not in LR_DECAYS:
            raise ValidationError(f"lr_decay must be one of {('auto', *LR_DECAYS)}, got "
                                  f"{self.lr_decay!r}", field="lr_decay", value=self.lr_decay)
        for name, (lo, hi) in INT_RANGES.items():
            object.__setattr__(self, name, check_int(name, getattr(self, name), lo, hi))
        lr, end_lr = self.lr, self.end_lr
        if lr is not None:
            lr = check_float("lr", lr, "a finite number > 0 (or None)", lambda x: x > 0)
        if end_lr is not None:
            end_lr = check_float("end_lr", end_lr, "a finite number >= 0 (or None)",
                                 lambda x: x >= 0)
        sample = check_float("subsample", self.subsample,
                             "a number in [0, 1) (word2vec's sample; 0: off)",
                             lambda x: 0.0 <= x < 1.0)
        for name in BOOLS:
            object.__setattr__(self, name, check_bool(name, getattr(self, name)))
        if self.context_table is not None:
            object.__setattr__(self, "context_table",
                               check_bool("context_table", self.context_table))
        check_names("metapath", self.metapath, allow_none=True)
        check_names("exclude_pairs", self.exclude_pairs)
        self._check_model()
        if lr is not None:
            object.__setattr__(self, "lr", lr)
        object.__setattr__(self, "sample", sample)
        check_active(self, {f.name: f.default for f in fields(self) if f.init})
        if self.is_resolved and lr is not None:
            object.__setattr__(self, "final_lr", lr * 1e-4 if end_lr is None else end_lr)
        else:  # what a run on a local graph uses (see resolve)
            object.__setattr__(self, "final_lr", self.resolve().final_lr)

    @property
    def is_resolved(self) -> bool:
        """Whether no field is left to the store (``"auto"`` or None).

        Example:
            >>> WalkOptions().is_resolved, WalkOptions().resolve().is_resolved
            (False, True)
        """
        return (self.optimizer != "auto" and self.lr is not None and self.lr_decay != "auto"
                and self.context_table is not None)

    def resolve(self, distributed: bool = False) -> WalkOptions:
        """These options with the fields left ``"auto"`` / None filled in for a run.

        ``optimizer="auto"`` is ``"pair_sgd"`` (word2vec's SGD after every pair: the
        fastest and, on BlogCatalog, the best path) on a local graph with the plain sigmoid
        model, and ``"adagrad"`` on a DistGraph (``distributed``) or with a model option
        (``loss_type``, ``sage_mode``, ``slots``, ``softsign``); ``lr=None`` is the
        optimizer's :data:`DEFAULT_LR`; ``lr_decay="auto"`` is ``"linear"`` with
        ``"pair_sgd"`` (word2vec's schedule), ``"none"`` otherwise;
        ``context_table=None`` is True on the sigmoid fast path (word2vec's output vectors),
        False with a model (which scores pairs with one table per node type).

        Example:
            >>> o = WalkOptions().resolve()
            >>> o.optimizer, o.lr, o.lr_decay, o.context_table
            ('pair_sgd', 0.025, 'linear', True)
            >>> o = WalkOptions().resolve(distributed=True)
            >>> o.optimizer, o.lr, o.lr_decay, o.context_table
            ('adagrad', 0.1, 'none', True)
            >>> WalkOptions(loss_type="hinge").resolve().optimizer
            'adagrad'
        """
        if self.is_resolved:
            return self
        opt = self.optimizer if self.optimizer != "auto" else (
            "adagrad" if distributed or self.uses_model else "pair_sgd")
        return replace(self, optimizer=opt,
                       lr=DEFAULT_LR[opt] if self.lr is None else self.lr,
                       lr_decay=self.lr_decay if self.lr_decay != "auto" else (
                           "linear" if opt == "pair_sgd" else "none"),
                       context_table=(not self.uses_model if self.context_table is None
                                      else self.context_table))

    def _check_model(self) -> None:
        """Validate and normalise the model fields (Graph4Rec's keys)."""
        for name, valid in (("loss_type", LOSS_TYPES), ("sage_layer_type", SAGE_LAYERS),
                            ("sage_act", _ACTS), ("neg_distribution", NEG_DISTRIBUTIONS)):
            check_choice(getattr(self, name), valid, name)
        for name in ("samples", "infer_samples"):
            object.__setattr__(self, name, check_hops(name, getattr(self, name)))
        if len(self.infer_samples) != len(self.samples):
            raise ValidationError(f"infer_samples {list(self.infer_samples)} must have as many "
                                  f"hops as samples {list(self.samples)}",
                                  field="infer_samples", value=self.infer_samples)
        object.__setattr__(self, "sage_alpha", check_float(
            "sage_alpha", self.sage_alpha, "a number in [0, 1]", lambda x: 0.0 <= x <= 1.0))
        for name in ("dense_lr", "slot_feature_lr", "margin"):
            object.__setattr__(self, name, check_float(
                name, getattr(self, name), "a finite number > 0", lambda x: x > 0))
        if self.init_range is not None:
            object.__setattr__(self, "init_range", check_float(
                "init_range", self.init_range, "a finite number > 0 (or None)",
                lambda x: x > 0))
        slots = [self.slots] if isinstance(check_names("slots", self.slots), str) else list(
            self.slots)
        if not all(slots):
            raise ValidationError(f"slots must be names of node features, got {self.slots!r}",
                                  field="slots", value=self.slots)
        object.__setattr__(self, "slots", tuple(slots))
        if self.gcl_loss is None or self.gcl_loss is False or self.gcl_loss == "":
            object.__setattr__(self, "gcl_loss", None)
        elif not (isinstance(self.gcl_loss, str) and self.gcl_loss in GCL_LOSSES):
            raise ValidationError(f"gcl_loss must be one of {GCL_LOSSES} (or unset), got "
                                  f"{self.gcl_loss!r}", field="gcl_loss", value=self.gcl_loss)
        if self.uses_model and self.optimizer == "pair_sgd":
            raise ValidationError("optimizer 'pair_sgd' is word2vec's sigmoid update; loss_type, "
                                  "sage_mode, slots, softsign, gcl_loss and hcl need "
                                  "'adagrad', 'adam' or 'sgd'", field="optimizer",
                                  value=self.optimizer)

    @property
    def uses_model(self) -> bool:
        """Whether training goes through the torch model (anything beyond the sigmoid loss
        on bare tables).

        Example:
            >>> WalkOptions().uses_model, WalkOptions(loss_type="hinge").uses_model
            (False, True)
        """
        return (self.loss_type != "sigmoid" or self.sage_mode or bool(self.slots)
                or self.softsign or self.gcl_loss is not None or self.hcl)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The fields a caller sets (``train_walk_embedding``'s keyword overrides).

        Example:
            >>> WalkOptions.names()[:3]
            ('metapath', 'walk_len', 'walk_times')
        """
        return tuple(f.name for f in fields(cls) if f.init)

    def checkpoint_params(self) -> dict[str, Any]:
        """The parameters a checkpoint records and a resumed run must match.

        The keys of the first checkpoints are always there; ``lr_decay``, ``end_lr`` and
        ``epochs`` only with a decay, ``random_window`` only when on and ``subsample``
        only when set, so checkpoints written before those options existed still resume.
        Fields left to the store are resolved first as for a local graph (:meth:`resolve`;
        a run records the values it used).

        Example:
            >>> WalkOptions(lr_decay="linear", end_lr=0.0, epochs=2).checkpoint_params()[
            ...     "end_lr"]
            0.0
            >>> "subsample" in WalkOptions(subsample=0).checkpoint_params()
            False
        """
        if not self.is_resolved:
            return self.resolve().checkpoint_params()
        m = self.metapath
        params: dict[str, Any] = {
            "metapath": m if m is None or isinstance(m, str) else list(m),
            "walk_len": int(self.walk_len), "walk_times": self.walk_times,
            "win_size": self.win_size, "neg_num": self.neg_num, "emb_size": self.emb_size,
            "lr": self.lr, "batch_size": self.batch_size, "seed": self.seed,
            "optimizer": self.optimizer, "neg_distribution": self.neg_distribution,
            "context_table": self.context_table, "walk_buffer": self.walk_buffer}
        if self.lr_decay != "none":
            params.update(lr_decay=self.lr_decay, end_lr=self.final_lr, epochs=self.epochs)
        if self.random_window:
            params["random_window"] = True
        if self.sample:
            params["subsample"] = self.sample
        for f in fields(self):  # the model fields, only where set (older checkpoints resume)
            if f.name in _MODEL_FIELDS and getattr(self, f.name) != f.default:
                v = getattr(self, f.name)
                params[f.name] = list(v) if isinstance(v, tuple) else v
        return params
