"""Every public function of multibody.spatial is a Numba kernel callable from
other kernels, and every public function and module is documented."""
import inspect

import numba
import numpy as np
import pytest
from numba import njit

from multibody.spatial import euler, quaternion, se3, so3, spatial as sp

MODULES = [so3, quaternion, euler, se3, sp]
NOT_JITTED = {"composite_inertia", "check_inertia", "principal_moments", "inertia_defects", "balance_inertia",
              "lift_inertia"}  # model-building helpers, by design


def public_functions(mod):
    for name, obj in vars(mod).items():
        if name.startswith("_") or name == "njit":
            continue
        if getattr(obj, "__module__", None) != mod.__name__:
            continue
        if callable(obj) and not isinstance(obj, type):
            yield name, obj


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__)
def test_public_functions_are_njit_and_documented(mod):
    assert mod.__doc__ and len(mod.__doc__) > 50
    names = []
    for name, f in public_functions(mod):
        names.append(name)
        py = getattr(f, "py_func", f)
        assert py.__doc__ and py.__doc__.strip(), f"{mod.__name__}.{name} has no docstring"
        if name in NOT_JITTED:
            assert not isinstance(f, numba.core.registry.CPUDispatcher)
        elif not numba.config.DISABLE_JIT:
            assert isinstance(f, numba.core.registry.CPUDispatcher), f"{mod.__name__}.{name} is not njit"
            assert f.targetoptions.get("nogil") and f._cache.__class__.__name__ != "NullCache", name
    assert names


@njit(cache=False)
def _kernel(xi, q, rpy, m, c, Ic):
    # a few calls across all modules from inside a kernel
    T = se3.exp(xi)
    back = se3.log(T)
    R = quaternion.to_rotation(q)
    X = sp.plucker(R, T[:3, 3])
    v = sp.apply_motion(R.T.copy(), T[:3, 3], back)
    I6 = sp.transform_inertia(R, T[:3, 3], sp.mcI(m, c, Ic))
    E = euler.rpy_rates_to_world_omega_matrix(rpy) @ euler.world_omega_to_rpy_rates_matrix(rpy)
    D = se3.dexp(xi) @ se3.dexp_inv(xi)
    w = so3.log(so3.exp(xi[:3]))
    return back, X @ back - v, I6, E, D, w


def test_usable_from_other_kernels():
    xi = np.array([0.3, -0.2, 0.9, 1.0, 2.0, -0.5])
    q = quaternion.exp(np.array([0.1, 0.2, -0.3]))
    back, dv, I6, E, D, w = _kernel(xi, q, np.array([0.1, 0.2, 0.3]), 2.0, np.array([0.1, 0, 0]),
                                    np.eye(3))
    np.testing.assert_allclose(back, xi, atol=1e-14)
    np.testing.assert_allclose(dv, 0, atol=1e-14)
    np.testing.assert_allclose(E, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(D, np.eye(6), atol=1e-14)
    np.testing.assert_allclose(w, xi[:3], atol=1e-15)
    assert I6[3, 3] == 2.0


def test_non_contiguous_inputs():
    # kernels receive slices of larger arrays (e.g. T[:3, :3]); results must not change
    rng = np.random.default_rng(3)
    big = rng.normal(size=(8, 8))
    R = so3.exp(np.array([0.4, -0.1, 0.8]))
    big[::2, ::2][:3, :3] = R
    Rv = big[::2, ::2][:3, :3]
    assert not Rv.flags.c_contiguous
    p = big[1, ::3][:3]
    np.testing.assert_array_equal(sp.plucker(Rv, p), sp.plucker(R, p.copy()))
    np.testing.assert_array_equal(se3.log_rp(Rv, p), se3.log_rp(R, p.copy()))
    np.testing.assert_array_equal(so3.log(Rv), so3.log(R))
