"""The plan of one dispatch: what every task needs to know (small; sent to each task), and
where the work folder keeps each piece (routed edges and features, node ID maps)."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io.chunked import ChunkedMeta, load_chunked_meta
from ..storage.files import (
    load_npy,
)
from ..storage.tensorfile import load_tensors
from ..storage.workstore import WorkStore

__all__ = ["Plan", "joined_node_maps", "node_block_rel"]


@dataclass(frozen=True)
class Plan:
    """What every task needs to know (small; sent to each task)."""

    metadata: str
    work: str
    out: str
    ntypes: list[str]
    etypes: list[str]
    num_nodes: list[int]
    num_parts: int
    node_block: int
    num_hops: int
    edge_chunks: list[list[tuple[int, int]]]        # per etype: (offset, rows) per chunk
    node_feats: dict[str, list[tuple[str, list[tuple[int, int]]]]]
    edge_feats: dict[str, list[tuple[str, list[tuple[int, int]]]]]
    scratch: str | None = None  # a scratch pool whose freed files big writes take over
    trainers: int = 1  # num_trainers_per_machine: the assignment holds trainer parts
    run: str = ""  # names the run's node-local copies when ``work`` is a URI

    def meta(self) -> ChunkedMeta:
        """The chunked metadata (parsed again in each task: it is small)."""
        return load_chunked_meta(self.metadata)

    @property
    def store(self) -> WorkStore:
        """The work folder: local, or a URI whose pieces tasks copy (:mod:`.workstore`)."""
        return WorkStore(self.work, self.run)

    def assignment_file(self, t: int) -> Path:
        """Binary assignment of node type ``t`` (a local path, fetched when remote)."""
        return self.store.fetch(f"assign/{self.ntypes[t]}.npy")

    def trainer_file(self, t: int) -> Path:
        """Trainer part of each node of type ``t`` (``trainers > 1`` only)."""
        return self.store.fetch(f"assign/{self.ntypes[t]}.trainer.npy")

    def node_map_file(self, t: int) -> Path:
        """Original per-type ID -> new homogeneous ID, node type ``t`` (a local path)."""
        if self.store.remote:
            return joined_node_maps(self) / f"orig2new_{t}.npy"
        return Path(self.work) / "nodes" / f"orig2new_{t}.npy"

    def new2orig_file(self) -> Path:
        """New homogeneous ID -> original homogeneous ID (a local path)."""
        if self.store.remote:
            return joined_node_maps(self) / "new2orig.npy"
        return Path(self.work) / "nodes" / "new2orig.npy"

    @staticmethod
    def edge_rel(e: int, c: int) -> str:
        """Piece of chunk ``c`` of edge type ``e``, split by owning part."""
        return f"edges/e{e}_c{c}.safetensors"

    @staticmethod
    def feat_rel(kind: str, type_index: int, name_index: int, c: int) -> str:
        """Piece of rows of one feature chunk, split by owning part."""
        return f"feats/{kind}{type_index}_f{name_index}_c{c}.safetensors"

    def edge_rels(self, e: int, c: int) -> list[str]:
        """The files of one routed edge piece: one (all parts, grouped by part) in a local
        work folder; one per part in a remote one, so that a part task copies only its
        rows (the first file's marker covers them all)."""
        if not self.store.remote:
            return [self.edge_rel(e, c)]
        return [f"edges/e{e}_c{c}/p{q}.safetensors" for q in range(self.num_parts)]

    def feat_rels(self, kind: str, type_index: int, name_index: int, c: int) -> list[str]:
        """The files of one routed feature piece (as :meth:`edge_rels`)."""
        if not self.store.remote:
            return [self.feat_rel(kind, type_index, name_index, c)]
        return [f"feats/{kind}{type_index}_f{name_index}_c{c}/p{p}.safetensors"
                for p in range(self.num_parts)]

    def edge_part(self, e: int, c: int, q: int) -> tuple[dict[str, np.ndarray], int, int, Path]:
        """Part ``q``'s edges of a routed edge piece: its tensors (``counts`` of every
        part; ``src``, ``dst``, ``pos``), the rows ``lo:hi`` of part ``q`` in them, and
        the local file read (memory-mapped)."""
        rels = self.edge_rels(e, c)
        path = self.store.fetch(rels[q if self.store.remote else 0], marker=rels[0])
        piece, _ = load_tensors(path)
        if self.store.remote:
            return piece, 0, len(piece["src"]), path
        cut = np.concatenate([[0], np.cumsum(piece["counts"])])
        return piece, int(cut[q]), int(cut[q + 1]), path

    def feat_part(self, kind: str, type_index: int, name_index: int, c: int, p: int
                  ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """The tensors and metadata of a routed feature piece that hold part ``p``'s rows
        (named ``"<p>"``, or ``"<p>/values"`` and ``"<p>/offsets"``)."""
        rels = self.feat_rels(kind, type_index, name_index, c)
        return load_tensors(self.store.fetch(rels[p if self.store.remote else 0],
                                             marker=rels[0]))

    def release_pieces(self) -> None:
        """Drop this process's copies of the routed pieces (remote work folder): what a
        part task does when it is done with them."""
        if self.store.remote:  # one task at a time per process: the folders go whole
            for folder in ("edges", "feats"):
                shutil.rmtree(self.store.path(f"{folder}/x").parent, ignore_errors=True)


def node_block_rel(t: int, b: int) -> str:
    return f"nodes/orig2new_{t}_b{b}.npy"


_join_lock = threading.Lock()


def joined_node_maps(plan: Plan) -> Path:
    """This process's node-local folder of the run's full node maps (``orig2new_<t>.npy``
    and ``new2orig.npy``), joined once from the block pieces of a remote work folder
    (each downloaded, checked against its marker, and dropped once copied in)."""
    store = plan.store
    folder = store.path("joined-nodes/x").parent
    done = folder / "new2orig.npy"
    with _join_lock:
        if done.is_file():
            return folder
        type_offsets = np.concatenate([[0], np.cumsum(plan.num_nodes)]).astype(np.int64)
        new2orig = np.lib.format.open_memmap(folder / "new2orig.tmp.npy", mode="w+",
                                             dtype=np.int64, shape=(int(type_offsets[-1]),))
        for t, n in enumerate(plan.num_nodes):
            orig2new = np.lib.format.open_memmap(folder / f"orig2new_{t}.tmp.npy", mode="w+",
                                                 dtype=np.int64, shape=(n,))
            for b, lo in enumerate(range(0, n, plan.node_block)):
                rel = node_block_rel(t, b)
                block = load_npy(store.fetch(rel))
                orig2new[lo:lo + len(block)] = block
                new2orig[block] = type_offsets[t] + lo + np.arange(len(block), dtype=np.int64)
                store.release(rel)
            orig2new.flush()
            del orig2new
            os.replace(folder / f"orig2new_{t}.tmp.npy", folder / f"orig2new_{t}.npy")
        new2orig.flush()
        del new2orig
        os.replace(folder / "new2orig.tmp.npy", done)  # last: the maps are complete
    return folder
