"""What the scripts of experiments/muller_terze/ share (Müller & Terze,
seed 004; set-ups from notes/seed-004.md §3): the models of E1–E3 as
multibody models, a run of RKMK in maximal coordinates on SE(3) or
SO(3) × R³ with its diagnostics, the command line (``--out``, default
out/muller_terze) and the figures (experiments/figures.py). Imported by
name: the scripts' folder is on ``sys.path`` when they run, and
tests/muller_terze/experiments.py puts it there.

The states are the bodies' centre-of-mass frames (``frames="com"``), as in
the paper; its parameters that the text omits are the notes' assumptions:
aluminium boxes (2700 kg/m³), g = 9.81 m/s², 1 s."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import figures  # noqa: E402
from figures import save, subplots  # noqa: E402,F401  (the scripts' figure helpers)

import multibody as mb  # noqa: E402
from multibody.formulations import MaximalSystem  # noqa: E402
from multibody.integrators.lie import RKMK  # noqa: E402
from multibody.spatial import se3, so3  # noqa: E402

ALUMINIUM = 2700.0  # kg/m³
BOX = (0.2, 0.1, 0.05)  # E2/E3's links: sides along their x, y, z (m)


def parser(doc):
    """An ArgumentParser described by the first line of ``doc``, with ``--out`` (default out/muller_terze)."""
    return figures.parser(doc, os.path.join("out", "muller_terze"))


def box_inertia(mass, sides):
    """Rotational inertia about the centre of a box (kg·m²)."""
    a, b, c = sides
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def heavy_top():
    """E1 (§5.1): the 0.1 × 0.2 × 0.4 m aluminium box (21.6 kg, Θ₀ =
    diag(0.36, 0.306, 0.09) about its centre) on a ball joint at the world
    origin, its centre at r₀ = (0.5, 0, 0) in its frame; no gravity (the
    paper's M = F = 0). Returns (model, q0, v0): ω₀ = (0, 20π, 10π) rad/s."""
    b = mb.ModelBuilder("heavy_top", gravity=(0.0, 0.0, 0.0))
    b.add_body("top", joint="spherical", joint_name="pivot", mass=21.6, com=(0.5, 0.0, 0.0),
               inertia=box_inertia(21.6, (0.1, 0.2, 0.4)))
    model = b.build()
    return model, model.neutral(), np.array([0.0, 20.0 * np.pi, 10.0 * np.pi])


def pendulum_links(name, gravity):
    """A ModelBuilder with E2's two aluminium boxes (0.2 × 0.1 × 0.05 m,
    2.7 kg, frames at their ends on the x axis) on ball joints: link1 at
    the world origin (joint1), link2 at link1's tip (joint2); gravity −z."""
    m = ALUMINIUM * np.prod(BOX)
    b = mb.ModelBuilder(name, gravity=(0.0, 0.0, -gravity))
    b.add_body("link1", joint="spherical", joint_name="joint1", mass=m, com=(0.1, 0.0, 0.0),
               inertia=box_inertia(m, BOX))
    tip = np.eye(4)
    tip[0, 3] = 0.2
    b.add_body("link2", parent="link1", joint="spherical", joint_name="joint2", placement=tip, mass=m,
               com=(0.1, 0.0, 0.0), inertia=box_inertia(m, BOX))
    return b


def double_pendulum(gravity=9.81):
    """E2 (§5.2): two aluminium boxes (0.2 × 0.1 × 0.05 m, 2.7 kg) in a
    chain along x, ball joints at the world origin and between them;
    ω₁ = (10, 0, 0), ω₂ = (10π, 10π, 20π) rad/s (each body's own, in its
    frame; the second joint's rate is ω₂ − ω₁ at R = I)."""
    model = pendulum_links("double_pendulum", gravity).build()
    w1, w2 = np.array([10.0, 0.0, 0.0]), np.pi * np.array([10.0, 10.0, 20.0])
    return model, model.neutral(), np.concatenate([w1, w2 - w1])


def floating_pair():
    """E3 (§5.3): the same two boxes joined by the ball joint only, no
    gravity; the first body's frame at its centre, at rest there (v₁ = 0,
    the notes' choice); ω₁ = (0, 0, −10), ω₂ = (1, −1, 2π) rad/s."""
    m = ALUMINIUM * np.prod(BOX)
    b = mb.ModelBuilder("floating_pair", gravity=(0.0, 0.0, 0.0))
    b.add_body("link1", joint="free", joint_name="float", mass=m, inertia=box_inertia(m, BOX))
    at = np.eye(4)
    at[0, 3] = 0.1
    b.add_body("link2", parent="link1", joint="spherical", joint_name="joint2", placement=at, mass=m,
               com=(0.1, 0.0, 0.0), inertia=box_inertia(m, BOX))
    model = b.build()
    q0 = model.neutral()
    q0[0] = 0.1  # link 1's centre at (0.1, 0, 0), as in E2
    w1, w2 = np.array([0.0, 0.0, -10.0]), np.array([1.0, -1.0, 2.0 * np.pi])
    return model, q0, np.concatenate([w1, np.zeros(3), w2 - w1])


def three_bar(spin=(5.0, 10.0, -7.0), gravity=9.81):
    """E4 (§5.4; the paper omits every parameter, these are the notes'
    reading with E2's links): two aluminium boxes (0.2 × 0.1 × 0.05 m) on
    ball joints at the world origin (joint 1) and at (0.3, 0, 0) (joint 3, a
    loop joint), joined tip to tip by a ball joint (joint 2), in the plane
    z = 0 at rest position; gravity along −z. The mechanism's three
    freedoms: the whole turning about the x axis through both pivots (Ω)
    and each link spinning about its own axis (s₁, s₂); ``spin`` = (Ω, s₁,
    s₂) rad/s. Returns (model, q0, v0) on the constraints."""
    half = 0.15
    angle = np.arctan2(np.sqrt(0.2 ** 2 - half ** 2), half)  # link 1 from the origin to the apex
    b = pendulum_links("three_bar", gravity)
    tip = np.eye(4)
    tip[0, 3] = 0.2
    pivot = np.eye(4)
    pivot[0, 3] = 2 * half
    b.add_loop_joint("link2", "world", "spherical", placement_a=tip, placement_b=pivot, name="joint3")
    model = b.build()
    q0 = model.integrate(model.neutral(), np.array([0.0, 0.0, angle, 0.0, 0.0, -2.0 * angle]))
    omega, s1, s2 = spin
    R1, R2 = so3.exp(np.array([0.0, 0.0, angle])), so3.exp(np.array([0.0, 0.0, -angle]))
    w1 = omega * np.array([1.0, 0.0, 0.0]) + s1 * R1[:, 0]
    w2 = omega * np.array([1.0, 0.0, 0.0]) + s2 * R2[:, 0]
    return model, q0, np.concatenate([R1.T @ w1, R2.T @ (w2 - w1)])


def momentum(system, C, V):
    """The world spatial momentum (angular about the origin; linear) of the
    bodies: Σ Ad(C)⁻ᵀ M V over the body frames (kg·m²/s; kg·m/s)."""
    Cb, Vb = system._body_frames(C, V) if system.frames != "body" else (C, V)
    total = np.zeros(6)
    for k in range(system.n):
        total += se3.Ad(se3.inverse(Cb[k])).T @ (system.inertia[k] @ Vb[k])
    return total


def run(model, q0, v0, lie_group, h, duration=1.0, frames="com"):
    """RKMK4 (``lie_group`` "se3" or "so3xr3") in maximal coordinates from
    the reduced state (q0, v0) for ``duration`` s at step h: a dict of
    ``t``, ``errors`` (steps + 1, joints: the joints' position errors, m,
    the tree's then the loop joints'),
    ``kinetic``, ``energy`` (kinetic + potential, J) and ``momentum``
    (steps + 1, 6)."""
    system = MaximalSystem(model, frames=frames, loops=True)
    C, V = system.state(q0, v0)
    rkmk = RKMK(4, lie_group)
    tau = np.zeros(model.nv)
    steps = int(round(duration / h))
    joints = system.n + len(system.loop_ends)
    out = dict(t=np.arange(steps + 1) * h, errors=np.zeros((steps + 1, joints)), kinetic=np.zeros(steps + 1),
               energy=np.zeros(steps + 1), momentum=np.zeros((steps + 1, 6)))
    for k in range(steps + 1):
        if k:
            C, V = rkmk.step_maximal(system, C, V, tau, h)
        out["errors"][k] = system.joint_errors(C)
        kinetic, potential = system.energy(C, V)
        out["kinetic"][k], out["energy"][k] = kinetic, kinetic + potential
        out["momentum"][k] = momentum(system, C, V)
    return out
