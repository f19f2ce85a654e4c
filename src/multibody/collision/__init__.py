"""Collision geometry and detection (L3): shape codes and the packed
geometry table, narrow phase (pairs of shapes) and broad phase."""
from .shapes import SHAPE_CODES, SHAPE_NAMES
