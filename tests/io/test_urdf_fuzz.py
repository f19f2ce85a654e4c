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
import copy
import glob
import os
import re
import signal
import sys
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import multibody as mb
from multibody.errors import MultibodyError
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


SPECIAL = ["nan", "inf", "-inf", "0", "-0", "-1", "1e308", "-1e308", "1e-308", "1e30", "-1e30", "abc", "", "1 2",
           "0 0 0 0", "3.5e", "NaN NaN NaN", "1e999", "0x10", "1_000"]
SCALES = [-1.0, 0.0, 1e-9, 1e-3, 0.5, 2.0, 1e3, 1e9, 1e200]
NUMBER = re.compile(r"(?<![\w.])-?\d+\.?\d*(?:e-?\d+)?(?![\w.])")
TAGS = ["link", "joint", "inertial", "inertia", "mass", "origin", "axis", "limit", "mimic", "visual", "collision",
        "geometry", "mesh", "box", "material", "parent", "child", "robot", "dynamics"]
MESHES = ["package://../../../../etc/passwd", "package://pkg/../../../etc/passwd", "../../../../etc/passwd",
          "/etc/passwd", "file:///etc/passwd", "file://../../x.stl", "package://", "package:///", "", "http://x/y.stl"]


def mutate(text, rng):
    """One random mutation of the XML ``text`` (structure through ElementTree, or raw text)."""
    kind = rng.integers(13)
    if kind >= 10:  # one number scaled (most such mutants still parse: they reach the model checks)
        nums = list(NUMBER.finditer(text))
        if not nums:
            return text
        mt = nums[rng.integers(len(nums))]
        x = float(mt.group()) * SCALES[rng.integers(len(SCALES))]
        return text[:mt.start()] + repr(x) + text[mt.end():]
    if kind == 0:  # truncate
        return text[:rng.integers(len(text))]
    if kind == 1:  # insert a character
        i = rng.integers(len(text))
        return text[:i] + rng.choice(list("<>\"'=/ &;\x00é0-.e")) + text[i:]
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return text
    elems = list(root.iter())
    e = elems[rng.integers(len(elems))]
    attrs = sorted(e.attrib)
    if kind in (2, 3, 4) and attrs:
        a = attrs[rng.integers(len(attrs))]
        if kind == 2:      # a special value
            e.set(a, SPECIAL[rng.integers(len(SPECIAL))])
        elif kind == 3:    # one number of the value changed
            toks = e.attrib[a].split()
            if toks:
                toks[rng.integers(len(toks))] = SPECIAL[rng.integers(len(SPECIAL))]
                e.set(a, " ".join(toks))
        else:              # removed
            del e.attrib[a]
    elif kind == 5:        # an element removed with its subtree
        parents = {c: p for p in elems for c in p}
        if e in parents:
            parents[e].remove(e)
    elif kind == 6:        # an element duplicated (duplicate names, two parents, ...)
        parents = {c: p for p in elems for c in p}
        if e in parents:
            parents[e].append(copy.deepcopy(e))
    elif kind == 7:        # an element renamed to another tag
        e.tag = TAGS[rng.integers(len(TAGS))]
    elif kind == 8:        # a mesh pointed somewhere else (outside its roots, odd URIs)
        meshes = [x for x in elems if x.tag == "mesh"] or [e]
        meshes[rng.integers(len(meshes))].set("filename", MESHES[rng.integers(len(MESHES))])
    else:                  # a new attribute from another element's
        others = [(x, k) for x in elems for k in x.attrib]
        if others:
            x, k = others[rng.integers(len(others))]
            e.set(k, x.attrib[k])
    return ET.tostring(root, encoding="unicode")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang("load_urdf did not return within 30 s")


def run(seed, n, tmp_path):
    """Load ``n`` mutants drawn with ``seed``; return (outcomes, failures)."""
    rng = np.random.default_rng(seed)
    seeds = corpus()
    folder = tmp_path / "pkg" / "urdf"
    folder.mkdir(parents=True, exist_ok=True)
    outcomes = {"model": 0, "error": 0}
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for k in range(n):
            label, text = seeds[rng.integers(len(seeds))]
            for _ in range(1 + rng.integers(3)):
                text = mutate(text, rng)
            source = text
            if k % 4 == 0:  # from a file: mesh paths are resolved (and confined) relative to its folder
                source = folder / f"m{k}.urdf"
                source.write_text(text)
            signal.alarm(30)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = mb.load_urdf(source, floating_base=bool(k % 2), inertia=("warn", "strict", "fix")[k % 3])
                    q = model.neutral()
                    if not np.isfinite(q).all():
                        failures.append((k, label, "neutral() not finite", text))
                    mb.forward_kinematics(model, q)
                    mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
                outcomes["model"] += 1
            except MultibodyError:
                outcomes["error"] += 1
            except Exception as e:  # noqa: BLE001 - what the test looks for (a Hang included)
                failures.append((k, label, f"{type(e).__name__}: {e}", text))
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return outcomes, failures


def check(seed, n, tmp_path):
    outcomes, failures = run(seed, n, tmp_path)
    assert not failures, "\n\n".join(f"#{k} from {lab}: {why}\n{txt[:1500]}" for k, lab, why, txt in failures[:3])
    # the mutations are not all refused (nor all harmless)
    assert outcomes["model"] > n // 10 and outcomes["error"] > n // 10, outcomes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutated_urdf_gives_a_model_or_a_library_error(seed, tmp_path):
    check(seed, 100, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 106))
def test_mutated_urdf_many(seed, tmp_path):
    check(seed, 500, tmp_path)
