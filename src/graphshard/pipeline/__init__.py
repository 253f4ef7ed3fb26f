"""The out-of-core pipeline: chunked graph -> assignment -> partitions, on Ray or locally.

Example:
    >>> from graphshard import pipeline
    >>> "dispatch" in pipeline.__all__
    True
"""

from .assign import ASSIGN_METHODS, AssignResult, assign, import_assignment
from .dispatch import DispatchResult, dispatch
from .options import AssignOptions, DispatchOptions
from .run import PipelineResult, run_pipeline

__all__ = ["ASSIGN_METHODS", "AssignOptions", "AssignResult", "DispatchOptions", "DispatchResult",
           "PipelineResult", "assign", "dispatch", "import_assignment", "run_pipeline"]
