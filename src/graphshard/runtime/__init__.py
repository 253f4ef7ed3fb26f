"""Where work runs: the executor (in process, Ray tasks, Ray actors), Ray start-up, the
worker heap, and calls run alone in a process of their own.

- :mod:`~graphshard.runtime.executor`: one executor for the pipeline's steps, in this
  process or on Ray (tasks or a pool of actors, :mod:`~graphshard.runtime.actors`).
- :mod:`~graphshard.runtime.ray`: starting or joining Ray (a local Ray on loopback only).
- :mod:`~graphshard.runtime.malloc`: keeping or trimming a worker's heap between tasks.
- :mod:`~graphshard.runtime.alone`: a call run where no other thread draws from libc's
  ``rand()`` (METIS).

This package imports nothing of graphshard above :mod:`graphshard.errors`,
``graphshard._util`` and :mod:`graphshard.storage` (tests/test_imports.py checks it).
"""

__all__: list[str] = []
