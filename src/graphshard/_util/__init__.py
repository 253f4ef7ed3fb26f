"""Private helpers shared by several graphshard packages, grouped by concern.

Kernel support: :mod:`.jit` (numba settings), :mod:`.keyed` (keyed random draws),
:mod:`.prefetch` (software prefetch).
Files and the OS: :mod:`.files` (atomic writes, checksums, names and output folders),
:mod:`.tensorfile` (safetensors), :mod:`.direct` (``O_DIRECT`` writes), :mod:`.scratch`
(scratch files written over in place), :mod:`.process` (is a process alive),
:mod:`.ray` (starting Ray).  Arguments and the user: :mod:`.arrays` (ID arrays),
:mod:`.optional` (extras), :mod:`.progress` (progress bars).

A helper that one package alone uses lives in that package instead.
"""
