"""Private helpers shared by several graphshard packages, grouped by concern.

Kernel support: :mod:`.jit` (numba settings), :mod:`.keyed` (keyed random draws),
:mod:`.prefetch` (software prefetch).  Modules and names: :mod:`.lazy` (names a package
exports lazily), :mod:`.aliases` (deprecated module names).  Processes: :mod:`.process`
(is a process alive).  Arguments and the user: :mod:`.arrays` (ID arrays),
:mod:`.optional` (extras), :mod:`.progress` (progress bars).

Files, storage and tensor files live in :mod:`graphshard.storage`; Ray and executors in
:mod:`graphshard.runtime`.  A helper that one package alone uses lives in that package.
"""
