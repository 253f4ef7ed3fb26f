"""Readers and writers, one module per format.

Example:
    >>> from graphshard import io
    >>> "read_metis" in io.__all__
    True
"""

from .metis import read_metis

__all__ = ["read_metis"]
