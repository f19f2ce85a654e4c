"""Closed-loop mechanisms for the tests: a planar four-bar of revolute
joints in 3-D (overconstrained), a crank-slider, a spatial loop of
spherical joints, and random trees closed at a chosen configuration."""
import numpy as np

import multibody as mb
from multibody.constraints import Constraints, project_positions
from oracles import random_tree

# four-bar: ground pivots at x = 0 and x = D, crank L1, coupler L2, rocker L3; revolute about y
D, L1, L2, L3 = 1.0, 0.4, 1.2, 0.8


def rod(b, name, parent, placement, length, mass=1.0, axis=(0, 1, 0)):
    """A slender uniform rod along its body x axis on a revolute joint."""
    b.add_body(name, parent, "revolute", placement=placement, axis=axis, mass=mass, com=(length / 2, 0, 0),
               inertia=mass * length ** 2 / 12 * np.diag([0.001, 1.0, 1.0]))


def four_bar(theta=1.0):
    """The four-bar and a closed configuration with crank angle ``theta``."""
    b = mb.ModelBuilder("four_bar")
    rod(b, "crank", "world", None, L1)
    rod(b, "coupler", "crank", (np.eye(3), (L1, 0, 0)), L2)
    rod(b, "rocker", "world", (np.eye(3), (D, 0, 0)), L3)
    b.add_loop_joint("coupler", "rocker", "revolute", (np.eye(3), (L2, 0, 0)), (np.eye(3), (L3, 0, 0)),
                     axis=(0, 1, 0), name="closure")
    model = b.build()
    q, _ = project_positions(model, Constraints(model), np.array([theta, 0.9 - theta, 1.9]))
    return model, q


def crank_slider():
    """Crank (revolute at the origin) – connecting rod – slider on a
    prismatic joint along x; the rod's end is pinned to the slider."""
    b = mb.ModelBuilder("crank_slider")
    rod(b, "crank", "world", None, 0.3)
    rod(b, "rod", "crank", (np.eye(3), (0.3, 0, 0)), 1.0)
    b.add_body("slider", "world", "prismatic", axis=(1, 0, 0), mass=0.5, inertia=np.eye(3) * 1e-3)
    b.add_loop_joint("rod", "slider", "revolute", (np.eye(3), (1.0, 0, 0)), None, axis=(0, 1, 0), name="pin")
    model = b.build()
    q, _ = project_positions(model, Constraints(model), np.array([0.8, -1.0, 1.1]))
    return model, q


def spherical_pair():
    """Two rods hanging from the ground on spherical joints, their ends
    joined by a spherical loop joint (a spatial loop)."""
    b = mb.ModelBuilder("spherical_pair")
    for name, x in (("left", 0.0), ("right", 0.6)):
        b.add_body(name, "world", "spherical", placement=(np.eye(3), (x, 0, 0)), mass=1.0, com=(0, 0, -0.5),
                   inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_loop_joint("left", "right", "spherical", (np.eye(3), (0.3, 0, -1.0)), (np.eye(3), (-0.3, 0, -1.0)))
    model = b.build()
    q, _ = project_positions(model, Constraints(model), model.neutral())
    return model, q


def closed_random_tree(seed, joints, floating):
    """A random tree with loop joints of the given types between random
    bodies, placed so that every loop is closed at the returned q."""
    rng = np.random.default_rng(seed)
    b = random_tree(seed, n=10, floating=floating)
    draft = b.build()
    q = draft.random_configuration(seed=seed)
    names = [n for n in draft.body_names[1:]]
    oMi = mb.forward_kinematics(draft, q)
    for k, joint in enumerate(joints):
        a, c = rng.choice(names + ["world"], 2, replace=False)
        Pa = np.eye(4)
        Pa[:3, :3] = mb.spatial.so3.exp(rng.normal(size=3))
        Pa[:3, 3] = rng.normal(size=3) * 0.2
        ia, ic = draft.body_names.index(a), draft.body_names.index(c)
        Pc = np.linalg.inv(oMi[ic]) @ oMi[ia] @ Pa
        ax = rng.normal(size=3)
        b.add_loop_joint(a, c, joint, Pa, Pc, axis=ax, axis2=np.cross(ax, rng.normal(size=3)), pitch=0.1)
    return b.build(), q
