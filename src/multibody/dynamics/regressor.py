"""Dynamic equivalence and the inertia-parameter regressor (Featherstone
§9.7): the equation of motion is linear in the bodies' inertia parameters,
``τ = Y(q, v, a) π`` (Atkeson, An & Hollerbach 1986), which is what
parameter identification and the equivalence transformations of Table 9.7
work with."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..spatial.spatial import inertia_to_params
from ..model.joints import C_H, C_I, C_MASS
from ..model.checks import finite_result
from . import regressor_kernels as RK
from ._common import config, data_for, velocity
from .inverse import raise_state_status

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)


def inertial_parameters(model: Model) -> Array:
    """Inertia parameters of every moving body, shape (nbodies−1, 10): row
    ``i−1`` is body i's ``π = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz,
    I_yz, I_zz)`` in its body frame (kg, kg·m, kg·m²), with the rotational
    inertia taken about the **body origin** (``Ī = I_C + m [c]ᵀ[c]``, not the
    centroid) and ``I_xy`` the matrix entry (minus the product of inertia).
    This is Pinocchio's ``Inertia.toDynamicParameters`` order, and
    :func:`multibody.spatial.spatial.inertia_to_params` of the body's 6x6
    spatial inertia (Featherstone ``rbi``, Table A.3).

    Bodies attached by fixed joints keep their own rows (Pinocchio merges
    them into the parent joint's parameters).

    Parameters
    ----------
    model : Model
        The model.

    Returns
    -------
    numpy.ndarray
        ``π`` of the moving bodies, (nbodies−1, 10).
    """
    out = np.empty((model.nbodies - 1, 10))
    tree = model.tree
    for i in range(1, model.nbodies):
        I6 = np.zeros((6, 6))
        m = tree[i, C_MASS]
        h = tree[i, C_H:C_H + 3]
        I6[:3, :3] = tree[i, C_I:C_I + 9].reshape(3, 3)
        I6[:3, 3:] = [[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]]
        I6[3:, :3] = I6[:3, 3:].T
        I6[3:, 3:] = m * np.eye(3)
        out[i - 1] = inertia_to_params(I6)
    return out


def regressor(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, gravity: bool = True,
              data: Data | None = None) -> Array:
    """Joint-torque regressor ``Y`` (nv x 10·(nbodies−1)) such that
    ``Y @ inertial_parameters(model).ravel() + model.armature * a ==
    rnea(model, q, v, a)`` (Featherstone §9.7; Atkeson et al. 1986).

    Column block ``10(j−1) .. 10j−1`` belongs to body j with the parameter
    order of :func:`inertial_parameters` (body frame, inertia about the body
    origin); row k to velocity coordinate k (model v order). Gravity
    (``model.gravity`` unless ``gravity=False``) is included, as in
    Pinocchio's ``computeJointTorqueRegressor``, whose columns are the same
    when every body has a joint of its own (Pinocchio merges fixed-joint
    bodies). The armature (rotor inertia) term ``armature * a`` is **not** in
    Y: it is a parameter of the joints, not of the bodies. External forces
    are not linear in π and are not included.

    Computed by a compiled kernel in O(n·d) 6x10 products (d: tree depth):
    each body's 6x10 regressor ``A_j(v_j, a_j)`` is mapped to world
    coordinates once and projected on the motion subspaces of the joints
    that support it. One state or a batch (B, nv, 10·(nbodies−1)). With
    ``data`` (one state) the kinematics workspaces are reused. Units: rows
    in N·m or N per unit parameter. Accuracy: round-off (~1e-13 relative).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    a : array_like
        Generalized acceleration q̈, (nv,) or (B, nv) (rad/s², m/s²; free
        joints: body-frame [ω̇; v̇]).
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``Y``, (nv, 10·(nbodies−1)) or (B, nv, 10·(nbodies−1)).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    ncol = 10 * (model.nbodies - 1)
    data = data_for(model, data)  # checks the model and the thread
    try:
        fast = (q.shape == model.q_shape and v.shape == model.v_shape and a.shape == model.v_shape  # type: ignore[union-attr]
                and q.dtype == F64 and v.dtype == F64 and a.dtype == F64)  # type: ignore[union-attr]
    except AttributeError:
        fast = False
    if fast:  # validated inside the kernel call
        Y = np.empty((model.nv, ncol))
        st = RK.regressor_checked(model._tree, q, v, a, bool(gravity), data.poses, data.jac, data.spatial, Y)
        if st:
            raise_state_status(model, q, st)
        return finite_result("regressor", Y)
    q = config(model, q)
    v = velocity(model, v, q)
    a = velocity(model, a, q, "a")
    if q.ndim == 2:
        out = np.empty((q.shape[0], model.nv, ncol))
        RK.regressor_batch(model._tree, q, v, a, bool(gravity), out)
        return finite_result("regressor", out)
    Y = np.empty((model.nv, ncol))
    RK.regressor_kernel(model._tree, q, v, a, bool(gravity), data.poses, data.jac, data.spatial, Y)
    return finite_result("regressor", Y)
