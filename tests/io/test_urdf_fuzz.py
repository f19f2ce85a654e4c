"""Fuzzing load_urdf (fixed seeds): mutations of the URDF files shipped in
``multibody/data/robots``, of some example-robot-data URDFs and of the test
strings give a Model or a :class:`~multibody.errors.MultibodyError` — never
another exception, never a hang (each load runs under a 30 s alarm that
fails the test), never a non-finite neutral configuration; a loaded model
runs forward kinematics and rnea at its neutral configuration.

Mutations: attributes deleted or set to nan/inf/1e308/-1/garbage, one number
of an attribute replaced, numbers scaled, elements deleted, duplicated or
renamed, mesh file names pointed outside their roots, the text truncated or
a character inserted. 300 mutants in the default run (3 seeds x 100, all
three ``inertia=`` modes), 3,000 more with ``-m slow``.
"""
import glob
import os
import sys

import pytest

import fuzzing
import multibody as mb
from oracles import robots_dir

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: example-robot-data files in the corpus: small and medium robots that exercise every policy
#: (kept / repaired inertias, mass 0 with inertia, continuous joints, mimics, meshes, world roots)
ERD = ["ur_description/urdf/ur5_robot.urdf", "solo_description/robots/solo12.urdf",
       "bolt_description/robots/bolt.urdf", "allegro_hand_description/urdf/allegro_right_hand.urdf",
       "finger_edu_description/robots/finger_edu.urdf",
       "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
       "anymal_b_simple_description/robots/anymal.urdf", "z1_description/urdf/z1.urdf"]


def corpus():
    """(label, URDF text) of every seed file."""
    out = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(mb.__file__), "data", "robots", "*.urdf"))):
        with open(path) as f:
            out.append((os.path.basename(path), f.read()))
    for rel in ERD:
        with open(os.path.join(robots_dir(), rel)) as f:
            out.append((rel, f.read()))
    import test_urdf_loader as tl
    out.append(("ALL_JOINTS", tl.ALL_JOINTS))
    return out


TAGS = ["link", "joint", "inertial", "inertia", "mass", "origin", "axis", "limit", "mimic", "visual", "collision",
        "geometry", "mesh", "box", "material", "parent", "child", "robot", "dynamics"]
MESHES = ["package://../../../../etc/passwd", "package://pkg/../../../etc/passwd", "../../../../etc/passwd",
          "/etc/passwd", "file:///etc/passwd", "file://../../x.stl", "package://", "package:///", "", "http://x/y.stl"]


def repoint_mesh(elems, rng):
    """A mesh pointed somewhere else (outside its roots, odd URIs)."""
    meshes = [x for x in elems if x.tag == "mesh"] or elems[:1]
    meshes[rng.integers(len(meshes))].set("filename", MESHES[rng.integers(len(MESHES))])


def check(seed, n, tmp_path):
    folder = tmp_path / "pkg" / "urdf"
    folder.mkdir(parents=True, exist_ok=True)

    def load(k, text):
        source = text
        if k % 4 == 0:  # from a file: mesh paths are resolved (and confined) relative to its folder
            source = folder / f"m{k}.urdf"
            source.write_text(text)
        return mb.load_urdf(source, floating_base=bool(k % 2), inertia=("warn", "strict", "fix")[k % 3])
    fuzzing.check(*fuzzing.run(corpus(), n, seed, load, TAGS, repoint_mesh), n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutated_urdf_gives_a_model_or_a_library_error(seed, tmp_path):
    check(seed, 100, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 106))
def test_mutated_urdf_many(seed, tmp_path):
    check(seed, 500, tmp_path)
