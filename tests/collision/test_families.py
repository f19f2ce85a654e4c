"""A contact table compiles the narrow phase of its pairs' families only
(collision/narrow.py FAMILIES, one C entry point each in
constraints/_contact.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import multibody as mb
from multibody import _compiled
from multibody.collision import narrow
from multibody.collision.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, HFIELD, MESH, PLANE, SPHERE
from multibody.constraints import _contact as CF
from multibody.constraints.contact import ContactTable


def test_pair_families():
    """The family of every sorted pair of shape codes: the closed forms of
    primitives.py, box–box, and the support-function pairs (GJK/EPA, and a
    plane with an ellipsoid or a hull)."""
    family = getattr(narrow.pair_family, "py_func", narrow.pair_family)
    closed = [(PLANE, SPHERE), (PLANE, CAPSULE), (PLANE, CYLINDER), (PLANE, BOX), (SPHERE, SPHERE),
              (SPHERE, CAPSULE), (SPHERE, CYLINDER), (SPHERE, BOX), (CAPSULE, CAPSULE), (CAPSULE, BOX)]
    support = [(PLANE, ELLIPSOID), (PLANE, CONVEX), (SPHERE, ELLIPSOID), (SPHERE, CONVEX), (CAPSULE, CYLINDER),
               (CYLINDER, CYLINDER), (CYLINDER, BOX), (BOX, CONVEX), (ELLIPSOID, CONVEX), (CONVEX, CONVEX)]
    for pair in closed:
        assert family(*sorted(pair)) == narrow.CLOSED_FORM, pair
    for pair in support:
        assert family(*sorted(pair)) == narrow.SUPPORT, pair
    assert family(BOX, BOX) == narrow.BOX_BOX
    assert family(PLANE, PLANE) == narrow.UNSUPPORTED
    for t in (SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, CONVEX):  # height fields and meshes: terrain.py
        assert family(HFIELD, t) == narrow.TERRAIN and family(t, MESH) == narrow.TERRAIN
    for pair in [(PLANE, HFIELD), (PLANE, MESH), (HFIELD, HFIELD), (HFIELD, MESH), (MESH, MESH)]:
        assert family(*pair) == narrow.UNSUPPORTED, pair


def _scene():
    """A sphere, two boxes and an ellipsoid over a plane: pairs of all three families."""
    b = mb.ModelBuilder()
    for name, shape, size in (("ball", "sphere", (0.1,)), ("crate", "box", (0.2, 0.2, 0.2)),
                              ("crate2", "box", (0.2, 0.2, 0.2)), ("egg", "ellipsoid", (0.1, 0.1, 0.15))):
        b.add_body(name, joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
        b.add_geometry(name, shape, size, name=name)
    b.add_geometry("world", "plane", name="ground")
    return b.build()


@pytest.mark.skipif(not _compiled.JIT, reason="the entry points exist only in compiled code")
def test_each_pair_calls_its_familys_entry_point():
    table = ContactTable(_scene(), 1e-3)
    g = table.geometry
    expected = [CF.collide_address(narrow.pair_family(*sorted((g.code[i], g.code[j])))) for i, j in g.pairs]
    assert list(table.arrays["collider"]) == expected and all(expected)
    assert len(set(expected)) == 3


_CHILD = """
import json, numpy as np, multibody as mb
from multibody.constraints import _contact as CF
b = mb.ModelBuilder()
b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
b.add_geometry("ball", "sphere", (0.1,), name="ball")
b.add_geometry("world", "plane", name="ground")
model = b.build()
q0 = model.neutral(); q0[2] = 0.1
sim = mb.Simulator(model, dt=1e-3, q0=q0)
sim.rollout(steps=20)
print(json.dumps({"contacts": sim.contact.count, "entries": [str(k) for k in CF._ENTRIES]}))
"""


@pytest.mark.skipif(not _compiled.JIT, reason="entry points exist only in compiled code")
def test_a_sphere_on_a_plane_makes_only_the_closed_form_entry_point():
    """In a fresh process a simulator of a sphere on a plane creates the
    entry points of detection, its solver and the closed-form colliders,
    and none for box–box (10 s to compile cold) or GJK/EPA: an entry point
    that is not created is neither compiled nor loaded."""
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=dict(os.environ),
                         timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record["contacts"] == 1
    assert sorted(record["entries"]) == sorted(["detect", "pgs", str(("collide", narrow.CLOSED_FORM))]), record


_TERRAIN_CHILD = """
import json, numpy as np, multibody as mb
from multibody.constraints import _contact as CF
b = mb.ModelBuilder()
b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.004)
b.add_geometry("ball", "sphere", (0.1,), name="ball")
b.add_geometry("world", "hfield", (2.0, 2.0, 0.2, 0.1), heights=np.full((5, 5), 0.1), name="terrain")
model = b.build()
q0 = model.neutral(); q0[2] = 0.2
sim = mb.Simulator(model, dt=1e-3, q0=q0)
sim.rollout(steps=20)
print(json.dumps({"contacts": sim.contact.count, "entries": [str(k) for k in CF._ENTRIES]}))
"""


@pytest.mark.skipif(not _compiled.JIT, reason="entry points exist only in compiled code")
def test_a_sphere_on_a_height_field_makes_only_the_terrain_entry_point():
    """A height field's pairs are the TERRAIN family's: its simulator creates that entry point
    (with detection and its solver) and none of the other families'."""
    out = subprocess.run([sys.executable, "-c", _TERRAIN_CHILD], capture_output=True, text=True,
                         env=dict(os.environ), timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record["contacts"] == 1
    assert sorted(record["entries"]) == sorted(["detect", "pgs", str(("collide", narrow.TERRAIN))]), record
