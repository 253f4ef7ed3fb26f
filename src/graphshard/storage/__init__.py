"""Where bytes live: local paths and URIs, atomic writes, tensor files, scratch, work folders.

- :mod:`~graphshard.storage.fsys`: one file layer over local paths and URIs (``s3://``,
  ``gs://``, ``hdfs://``, on ``pyarrow.fs``): :class:`~graphshard.storage.fsys.Location`,
  reads, uploads and downloads.
- :mod:`~graphshard.storage.files`: atomic writes (temp file, fsync, rename), checksums,
  output folders that are claimed and marked complete.
- :mod:`~graphshard.storage.tensorfile`: safetensors files, memory-mapped on read;
  :mod:`~graphshard.storage.direct` writes big ones around the page cache.
- :mod:`~graphshard.storage.scratch`: node-local scratch folders.
- :mod:`~graphshard.storage.pieces`, :mod:`~graphshard.storage.workstore`: resumable work
  pieces with verified done-markers, in a local or a remote work folder.

This package imports nothing of graphshard above :mod:`graphshard.errors` and
``graphshard._util`` (tests/test_imports.py checks it).
"""

__all__: list[str] = []
