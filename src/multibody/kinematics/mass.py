"""Mass-dependent kinematic quantities: centre of mass and its Jacobian,
kinetic and potential energy, spatial and centroidal momentum."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._compiled import run_batch
from ..model.checks import finite_result
from . import kernels as K
from ._common import config, velocity

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model


def center_of_mass(model: Model, q: ArrayLike, v: ArrayLike | None = None) -> Array | tuple[Array, Array]:
    """World position (3,) of the centre of mass at ``q``; with ``v`` also
    its velocity: ``(com, vcom)``. Batches give (B, 3).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like, optional
        Generalized velocity, (nv,) or (B, nv); when given, the velocity of
        the centre of mass is returned too.

    Returns
    -------
    com : numpy.ndarray
        World position of the centre of mass (m), (3,) or (B, 3).
    vcom : numpy.ndarray
        Only with ``v``: its world velocity (m/s), (3,) or (B, 3).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    q = config(model, q)
    vv = np.zeros(q.shape[:-1] + (model.nv,)) if v is None else velocity(model, v, q)
    qb, vb = np.atleast_2d(q), np.atleast_2d(vv)
    out = np.empty((qb.shape[0], 2, 3))
    run_batch(K.com_batch, K.com_rows, qb.shape[0], model._tree, qb, vb, out)
    com, vcom = (out[0, 0], out[0, 1]) if q.ndim == 1 else (out[:, 0], out[:, 1])
    finite_result("center_of_mass", com, vcom)
    return com if v is None else (com, vcom)


def com_jacobian(model: Model, q: ArrayLike) -> Array:
    """Jacobian (3 x nv) of the centre of mass in world coordinates:
    ``vcom = Jcom v``. Batches give (B, 3, nv).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).

    Returns
    -------
    numpy.ndarray
        ``Jcom`` (m), (3, nv) or (B, 3, nv), world coordinates.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    q = config(model, q)
    qb = np.atleast_2d(q)
    out = np.empty((qb.shape[0], 3, model.nv))
    run_batch(K.com_jacobian_batch, K.com_jacobian_rows, qb.shape[0], model._tree, qb, out)
    return finite_result("com_jacobian", out[0] if q.ndim == 1 else out)


def kinetic_energy(model: Model, q: ArrayLike, v: ArrayLike) -> float | Array:
    """``½ Σ v_iᵀ I_i v_i`` (J); a float, or (B,) for a batch.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).

    Returns
    -------
    float or numpy.ndarray
        Kinetic energy (J): a float, or (B,) for a batch.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    return _energy(model, q, v, 0)


def potential_energy(model: Model, q: ArrayLike) -> float | Array:
    """Gravitational potential ``−Σ m_i gᵀ x_i`` (J), zero at the world
    origin; a float, or (B,).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).

    Returns
    -------
    float or numpy.ndarray
        Gravitational potential energy (J): a float, or (B,) for a batch.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    q = config(model, q)
    return _energy(model, q, np.zeros(q.shape[:-1] + (model.nv,)), 1)


def _energy(model, q, v, which):
    q = config(model, q)
    v = velocity(model, v, q)
    qb, vb = np.atleast_2d(q), np.atleast_2d(v)
    out = np.empty((qb.shape[0], 2))
    run_batch(K.energy_batch, K.energy_rows, qb.shape[0], model._tree, qb, vb, model.gravity, out)
    what = ("kinetic_energy", "potential_energy")[which]
    return finite_result(what, float(out[0, which]) if q.ndim == 1 else out[:, which])


def momentum(model: Model, q: ArrayLike, v: ArrayLike) -> Array:
    """Spatial momentum (6,) of the system at the world origin, world axes:
    (angular about the origin; linear) = ``Σ ⁰X_i* I_i v_i`` (Featherstone
    §2.12). Batches give (B, 6).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).

    Returns
    -------
    numpy.ndarray
        Spatial momentum (N·m·s; N·s) at the world origin, world axes, (6,)
        or (B, 6), angular first.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    return _momenta(model, q, v)[..., 0, :]


def centroidal_momentum(model: Model, q: ArrayLike, v: ArrayLike) -> Array:
    """Centroidal momentum (6,): (angular momentum about the centre of mass;
    linear momentum), world axes (Orin & Goswami; angular first, unlike
    Pinocchio). Batches give (B, 6).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).

    Returns
    -------
    numpy.ndarray
        Centroidal momentum (N·m·s; N·s), world axes, (6,) or (B, 6), angular
        first.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    """
    return _momenta(model, q, v)[..., 1, :]


def _momenta(model, q, v):
    q = config(model, q)
    v = velocity(model, v, q)
    qb, vb = np.atleast_2d(q), np.atleast_2d(v)
    out = np.empty((qb.shape[0], 2, 6))
    run_batch(K.momentum_batch, K.momentum_rows, qb.shape[0], model._tree, qb, vb, out)
    return finite_result("momentum", out[0] if q.ndim == 1 else out)


def centroidal_momentum_matrix(model: Model, q: ArrayLike) -> Array:
    """Centroidal momentum matrix ``A_G`` (6 x nv, angular rows first):
    ``centroidal_momentum = A_G v``. Batches give (B, 6, nv).

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).

    Returns
    -------
    numpy.ndarray
        ``A_G``, (6, nv) or (B, 6, nv), angular rows first.

    Raises
    ------
    InputError
        If ``q`` has the wrong shape, is not finite or has a non-unit
        quaternion.
    """
    q = config(model, q)
    qb = np.atleast_2d(q)
    out = np.empty((qb.shape[0], 6, model.nv))
    run_batch(K.centroidal_matrix_batch, K.centroidal_matrix_rows, qb.shape[0], model._tree, qb, out)
    return finite_result("centroidal_momentum_matrix", out[0] if q.ndim == 1 else out)
