"""Shared machinery of the loader fuzz tests (test_urdf_fuzz, test_mjcf_fuzz):
XML mutations and a loop that loads mutants under an alarm and sorts the
outcomes into models, library errors and failures (any other exception, a
hang, a non-finite neutral configuration, a model whose kinematics or
dynamics do not run)."""
import copy
import re
import signal
import warnings
import xml.etree.ElementTree as ET

import numpy as np

import multibody as mb
from multibody.errors import MultibodyError

SPECIAL = ["nan", "inf", "-inf", "0", "-0", "-1", "1e308", "-1e308", "1e-308", "1e30", "-1e30", "abc", "", "1 2",
           "0 0 0 0", "3.5e", "NaN NaN NaN", "1e999", "0x10", "1_000"]
SCALES = [-1.0, 0.0, 1e-9, 1e-3, 0.5, 2.0, 1e3, 1e9, 1e200]
NUMBER = re.compile(r"(?<![\w.])-?\d+\.?\d*(?:e-?\d+)?(?![\w.])")
HANG_SECONDS = 30


def mutate(text, rng, tags, extra=None):
    """One random mutation of the XML ``text``: a number scaled, the text
    truncated or a character inserted, an attribute set to a special value,
    changed in one token or deleted, an element deleted, duplicated or
    renamed to one of ``tags``, an attribute copied from another element,
    or ``extra(elements, rng)`` (a format-specific mutation) if given."""
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
        e.tag = tags[rng.integers(len(tags))]
    elif kind == 8 and extra is not None:
        extra(elems, rng)
    else:                  # a new attribute from another element's
        others = [(x, k) for x in elems for k in x.attrib]
        if others:
            x, k = others[rng.integers(len(others))]
            e.set(k, x.attrib[k])
    return ET.tostring(root, encoding="unicode")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"the loader did not return within {HANG_SECONDS} s")


def run(seeds, n, seed, load, tags, extra=None):
    """Load ``n`` mutants of the (label, text) ``seeds``, drawn with
    ``seed``, by ``load(k, text) -> Model``; each model must have a finite
    neutral configuration and run forward kinematics and rnea there.
    Returns ({"model": count, "error": count}, failures)."""
    rng = np.random.default_rng(seed)
    outcomes = {"model": 0, "error": 0}
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for k in range(n):
            label, text = seeds[rng.integers(len(seeds))]
            for _ in range(1 + rng.integers(3)):
                text = mutate(text, rng, tags, extra)
            signal.alarm(HANG_SECONDS)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = load(k, text)
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


def check(outcomes, failures, n):
    """No failure, and the mutations neither all refused nor all harmless."""
    assert not failures, "\n\n".join(f"#{k} from {lab}: {why}\n{txt[:1500]}" for k, lab, why, txt in failures[:3])
    assert outcomes["model"] > n // 10 and outcomes["error"] > n // 10, outcomes
