"""The out-of-core pipeline: chunked graph -> assignment -> partitions, on Ray or locally.

Example:
    >>> from graphshard import pipeline
    >>> "dispatch" in pipeline.__all__
    True
"""

from .assign import ASSIGN_METHODS, AssignResult, assign, import_assignment
from .dispatch import DispatchResult, dispatch

__all__ = ["ASSIGN_METHODS", "AssignResult", "DispatchResult", "assign", "dispatch",
           "import_assignment"]
