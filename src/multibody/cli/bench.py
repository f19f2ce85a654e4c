"""``multibody bench [MODEL]``: a quick timing of the calls users make first.

A short subset of ``python3 run.py bench`` (which compares with Pinocchio
and MuJoCo in the same process): on one model, the plain calls of the
README (no ``data=`` workspace) at a random configuration —
``forward_kinematics``, ``frame_placements``, ``jacobian`` of the last
frame, ``rnea``, ``crba``, ``aba`` — then ``Simulator.step`` and a
1000-step ``rollout`` per integrator asked for. Each time is the best of
five repeats of a loop long enough to last about 0.1 s (``timeit``'s
autorange), after a first call that compiles or loads the kernels
(reported separately). Times depend on the machine and its load; they
are measurements, not checks."""
import time
import timeit

import numpy as np


def _best(fn, repeat=5):
    """Seconds per call of ``fn``: the best of ``repeat`` autoranged loops."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def bench(model, integrators=("semi_implicit_euler", "rk4"), dt=1e-3, steps=1000, repeat=5, out=print):
    """Time the user-facing calls on ``model`` (module docstring; best of
    ``repeat``, rollouts of ``steps`` steps); returns
    ``{name: (first call s, per call s)}``."""
    import multibody as mb

    q = model.random_configuration(seed=0)
    rng = np.random.default_rng(0)
    v, a, tau = (rng.standard_normal(model.nv) for _ in range(3))
    frame = model.frames[-1].name
    calls = {
        "forward_kinematics": lambda: mb.forward_kinematics(model, q),
        "frame_placements": lambda: mb.frame_placements(model, q),
        f"jacobian('{frame}')": lambda: mb.jacobian(model, q, frame),
        "rnea": lambda: mb.rnea(model, q, v, a),
        "crba": lambda: mb.crba(model, q),
        "aba": lambda: mb.aba(model, q, v, tau),
    }
    for name in integrators:
        sim = mb.Simulator(model, dt, name)
        q0, zero = model.neutral(), np.zeros(model.nv)

        def step(sim=sim):
            sim.step()

        def rollout(sim=sim, q0=q0, zero=zero):
            sim.reset(q0, zero)
            sim.rollout(steps=steps, progress=False)

        calls[f"Simulator.step ({name})"] = step
        calls[f"rollout {steps} steps ({name}), per step"] = rollout
    out(f"model '{model.name}': nq = {model.nq}, nv = {model.nv}, bodies = {model.nbodies - 1}; dt = {dt:g} s")
    out(f"  {'call':<48} {'first call':>11} {'per call':>11}")
    results = {}
    for name, fn in calls.items():
        t0 = time.perf_counter()
        fn()  # compiles, or loads from Numba's cache
        first = time.perf_counter() - t0
        per = _best(fn, repeat) / (steps if name.startswith("rollout") else 1)
        results[name] = (first, per)
        out(f"  {name:<48} {_fmt(first):>11} {_fmt(per):>11}")
    return results


def _fmt(s):
    return f"{s * 1e6:.3g} us" if s < 1e-3 else f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"
