"""Layout of the narrow phase's scratch array (one float64 vector, ``work``).

The narrow-phase kernels allocate nothing: every buffer they need (the
staged contacts of one pair, the GJK simplex, the EPA polytope, the
clipping polygons of the multi-point manifolds) is a region of one float64
array made once by :func:`narrow_workspace` and passed to each call. The
offsets below are compile-time constants. A workspace belongs to one
thread at a time.
"""
from __future__ import annotations

import numpy as np

MAX_CONTACTS = 8          # most contacts one pair produces (box-box face clipping)
STAGE = 0                 # staged contacts: MAX_CONTACTS rows of (dist, pos[3], normal[3])
STAGE_ROW = 7

SIMPLEX = STAGE + MAX_CONTACTS * STAGE_ROW   # GJK simplex: 4 rows of (w[3], a[3], b[3], dir[3])
SIMPLEX_ROW = 12

EPA_VMAX = 128            # polytope vertices (w, a, b, unit search direction per vertex)
EPA_FMAX = 1024           # faces ever created (dead faces are not reused)
EPA_EMAX = 512            # horizon edges of one expansion step
EPA_V = SIMPLEX + 4 * SIMPLEX_ROW
EPA_VROW = 12
EPA_F = EPA_V + EPA_VMAX * EPA_VROW        # faces: (i0, i1, i2, nx, ny, nz, dist, alive)
EPA_FROW = 8
EPA_E = EPA_F + EPA_FMAX * EPA_FROW        # horizon edges: (i, j)

FEAT_MAX = 32             # points of one support feature kept for a manifold
FEAT_A = EPA_E + EPA_EMAX * 2              # feature of shape A: FEAT_MAX x 3
FEAT_B = FEAT_A + FEAT_MAX * 3             # feature of shape B
POLY_A = FEAT_B + FEAT_MAX * 3             # hull order of feature A (indices as floats)
POLY_B = POLY_A + FEAT_MAX
CLIP_MAX = 2 * FEAT_MAX + 16               # vertices of a clipped polygon
CLIP0 = POLY_B + FEAT_MAX                  # two ping-pong polygon buffers, CLIP_MAX x 3 each
CLIP1 = CLIP0 + CLIP_MAX * 3
CAND = CLIP1 + CLIP_MAX * 3                # candidate contacts before reduction: CLIP_MAX x 7

# triangle meshes and height fields (terrain.py): the current triangle (TRI_SIZE values at terrain.py's
# T_* offsets), its prism (6 vertices about its centroid in the terrain frame, then the centroid's
# world position), the contacts gathered over the triangles before the reduction to MAX_CONTACTS
# (TCAND_MAX rows of STAGE_ROW, then one row for the deepest dropped one), two flags per gathered contact
# and the stack of the bounding-volume tree's traversal
TRI = CAND + CLIP_MAX * STAGE_ROW
TRI_SIZE = 36
PRISM = TRI + TRI_SIZE
PRISM_POS = PRISM + 18
TCAND_MAX = 256
TCAND = PRISM_POS + 3
TFALL = TCAND + TCAND_MAX * STAGE_ROW
TFLAG = TFALL + STAGE_ROW
TSTACK_MAX = 64
TSTACK = TFLAG + 2 * TCAND_MAX
WORK_SIZE = TSTACK + TSTACK_MAX


def narrow_workspace() -> np.ndarray:
    """A scratch array for :func:`multibody.collision.narrow.collide_pair` and
    :func:`~multibody.collision.narrow.signed_distance` (one per thread)."""
    return np.zeros(WORK_SIZE)
