"""Fuzzing load_mjcf (fixed seeds): mutations of the MJCF files shipped in
``multibody/data`` and of the MJCF strings of the tests give a Model or a
:class:`~multibody.errors.MultibodyError` — never another exception, never
a non-finite neutral configuration, never a hang (each load is timed).
300 mutations in the default run; 3,000 more with ``-m slow``."""
import glob
import os
import re
import sys
import time
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import multibody as mb
from multibody.errors import MultibodyError

mujoco = pytest.importorskip("mujoco")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "constraints"))


def corpus():
    """(label, XML text) of every seed file."""
    out = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(mb.__file__), "data", "**", "*.xml"), recursive=True)):
        with open(path) as f:
            out.append((os.path.basename(path), f.read()))
    import test_equality_frames as tef
    import test_mjcf_lenient as tml
    import test_mjcf_loader as tl
    out += [(f"MODELS[{k}]", v) for k, v in sorted(tl.MODELS.items())]
    out += [("FOUR_BAR_TIP", tef.FOUR_BAR_TIP), ("WELDED_BOX", tef.WELDED_BOX), ("SPRINGS", tml.SPRINGS),
            ("MOTORS", tml.MOTORS), ("TEMPLATE", tml.TEMPLATE.format(**tml.FINE)),
            ("BAD_INERTIA", tml.BAD_INERTIA.format(compiler="", inertia='diaginertia="0.1 0.1 0.5"'))]
    return out


SPECIAL = ["nan", "inf", "-inf", "0", "-0", "-1", "1e308", "-1e308", "1e-308", "1e30", "-1e30", "abc", "", "1 2",
           "0 0 0 0", "3.5e", "NaN NaN NaN", "1e999"]
SCALES = [-1.0, 0.0, 1e-9, 1e-3, 0.5, 2.0, 1e3, 1e9, 1e200]
NUMBER = re.compile(r"(?<![\w.])-?\d+\.?\d*(?:e-?\d+)?(?![\w.])")
TAGS = ["body", "joint", "geom", "site", "inertial", "freejoint", "connect", "weld", "motor", "position", "tendon",
        "default", "include", "compiler", "option", "frame", "camera", "light", "equality", "actuator", "sensor"]


def mutate(text, rng):
    """One random mutation of the XML ``text`` (structure through ElementTree, or raw text)."""
    kind = rng.integers(12)
    if kind >= 9:  # one number scaled (most such mutants still compile: they reach the conversion)
        nums = list(NUMBER.finditer(text))
        if not nums:
            return text
        mt = nums[rng.integers(len(nums))]
        x = float(mt.group()) * SCALES[rng.integers(len(SCALES))]
        return text[:mt.start()] + repr(x) + text[mt.end():]
    if kind == 0:  # truncate
        return text[:rng.integers(len(text))]
    if kind == 1:  # insert a random byte-ish character
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
    elif kind == 6:        # an element duplicated (duplicate names, second free joint, ...)
        parents = {c: p for p in elems for c in p}
        if e in parents:
            import copy
            parents[e].append(copy.deepcopy(e))
    elif kind == 7:        # an element renamed to another tag
        e.tag = TAGS[rng.integers(len(TAGS))]
    else:                  # a new attribute from another element's
        others = [(x, k) for x in elems for k in x.attrib]
        if others:
            x, k = others[rng.integers(len(others))]
            e.set(k, x.attrib[k])
    return ET.tostring(root, encoding="unicode")


def run(seed, n):
    """Load ``n`` mutants drawn with ``seed``; return (outcomes, failures, slowest seconds)."""
    rng = np.random.default_rng(seed)
    seeds = corpus()
    outcomes = {"model": 0, "error": 0}
    failures, slowest = [], 0.0
    for k in range(n):
        label, text = seeds[rng.integers(len(seeds))]
        for _ in range(1 + rng.integers(3)):
            text = mutate(text, rng)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = mb.load_mjcf(text, inertia=("warn", "strict", "fix")[k % 3])
                q = model.neutral()
                if not np.isfinite(q).all():
                    failures.append((k, label, "neutral() not finite", text))
                # the model is usable: kinematics and dynamics run at the neutral configuration
                mb.forward_kinematics(model, q)
                mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
            outcomes["model"] += 1
        except MultibodyError:
            outcomes["error"] += 1
        except Exception as e:  # noqa: BLE001 - what the test looks for
            failures.append((k, label, f"{type(e).__name__}: {e}", text))
        slowest = max(slowest, time.perf_counter() - t0)
    return outcomes, failures, slowest


def check(seed, n, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's MUJOCO_LOG.TXT
    outcomes, failures, slowest = run(seed, n)
    assert not failures, "\n\n".join(f"#{k} from {lab}: {why}\n{txt[:2000]}" for k, lab, why, txt in failures[:3])
    assert slowest < 5.0, slowest
    # the mutations are not all refused (nor all harmless)
    assert outcomes["model"] > n // 10 and outcomes["error"] > n // 10, outcomes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutated_mjcf_gives_a_model_or_a_library_error(seed, tmp_path, monkeypatch):
    check(seed, 100, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 106))
def test_mutated_mjcf_many(seed, tmp_path, monkeypatch):
    check(seed, 500, tmp_path, monkeypatch)
