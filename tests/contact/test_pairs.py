"""Which geometry pairs may collide (collision/table.py) against MuJoCo's
own filtering: every geometry of the scene overlaps every other, so
``mj_collision`` reports a contact for every pair its filters let through,
and those pairs must be exactly ours. Then detection through the simulator against MuJoCo's
contacts on the same scene."""
import numpy as np
import pytest

import multibody as mb
from multibody.collision.table import GeometryTable, candidate_pairs

mujoco = pytest.importorskip("mujoco")

SCENE = """
<mujoco>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <geom name="post" type="box" size="0.3 0.3 0.3"/>
    <body name="a" pos="0 0 0.1">
      <freejoint/>
      <geom name="a1" type="sphere" size="0.2"/>
      <geom name="a2" type="capsule" size="0.1 0.2" contype="2" conaffinity="2"/>
      <body name="b">
        <joint type="hinge" axis="0 1 0"/>
        <geom name="b1" type="box" size="0.2 0.2 0.2"/>
        <body name="c">
          <joint type="hinge" axis="0 1 0"/>
          <geom name="c1" type="sphere" size="0.2" contype="4" conaffinity="1"/>
          <geom name="c2" type="sphere" size="0.15" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
    <body name="d" pos="0 0 0.1">
      <freejoint/>
      <geom name="d1" type="box" size="0.2 0.2 0.2"/>
      <geom name="d2" type="capsule" size="0.1 0.1" contype="2" conaffinity="4"/>
    </body>
  </worldbody>
  <contact>
    <exclude body1="a" body2="d"/>
    <pair geom1="c2" geom2="d1"/>
  </contact>
</mujoco>
"""


def mujoco_pairs(xml):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    names = {frozenset((m.geom(int(c.geom1)).name, m.geom(int(c.geom2)).name)) for c in d.contact[:d.ncon]}
    return names


@pytest.mark.parametrize("filterparent", ["enable", "disable"])
def test_candidate_pairs_are_mujocos(filterparent):
    xml = SCENE.replace("<option ", f'<option><flag filterparent="{filterparent}"/></option>\n  <option ')
    model = mb.load_mjcf(xml)
    geoms = model.collision_geometries
    ours = {frozenset((geoms[a].name, geoms[b].name)) for a, b, *_ in candidate_pairs(model)}
    theirs = mujoco_pairs(xml)
    assert ours == theirs
    assert frozenset(("c2", "d1")) in ours              # explicit, although its masks are 0
    assert frozenset(("a1", "d1")) not in ours          # excluded
    assert frozenset(("floor", "post")) not in ours     # both static
    assert (frozenset(("a1", "b1")) in ours) == (filterparent == "disable")  # parent and child


def test_pair_parameters_combine_as_mujocos():
    """μ: the larger of the two geometries' (equal priorities); condim the
    larger, and a pair whose condim is 1 is frictionless; margins add;
    restitution: the larger."""
    b = mb.ModelBuilder()
    b.add_body("x", joint="free", mass=1.0, inertia=np.eye(3))
    b.add_geometry("x", "sphere", (0.1,), name="x", friction=(0.3, 0.0, 0.0), margin=0.01, restitution=0.2)
    b.add_body("y", joint="free", mass=1.0, inertia=np.eye(3))
    b.add_geometry("y", "sphere", (0.1,), name="y", friction=(0.7, 0.0, 0.0), margin=0.02, condim=1)
    b.add_body("z", joint="free", mass=1.0, inertia=np.eye(3))
    b.add_geometry("z", "sphere", (0.1,), name="z", friction=(0.9, 0.0, 0.0), condim=1)
    b.add_geometry("world", "plane", name="floor", friction=(0.5, 0.0, 0.0), restitution=0.6)
    table = GeometryTable(b.build())
    by_name = {frozenset((table.geometries[i].name, table.geometries[j].name)): k
               for k, (i, j) in enumerate(table.pairs)}
    xy, xf, yf, yz = (by_name[frozenset(p)] for p in (("x", "y"), ("x", "floor"), ("y", "floor"), ("y", "z")))
    assert table.mu[xy] == 0.7 and table.mu[yf] == 0.7 and table.mu[xf] == 0.5
    assert table.mu[yz] == 0.0                               # condim 1 on both
    assert table.margin[xy] == pytest.approx(0.03)
    assert table.restitution[xf] == 0.6 and table.restitution[xy] == 0.2


def test_contacts_at_rest_match_mujocos():
    """A box and a capsule lying on a plane and a sphere on the box: the
    contacts our detection finds at the start of a step (positions,
    normals, distances) are MuJoCo's at the same configuration."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
      <body name="box" pos="0 0 0.099"><freejoint/><geom name="box" type="box" size="0.2 0.15 0.1"/></body>
      <body name="ball" pos="0.05 0.02 0.297"><freejoint/><geom name="ball" type="sphere" size="0.1"/></body>
      <body name="cap" pos="1 0 0.049"><freejoint/>
        <geom name="cap" type="capsule" size="0.05 0.2" euler="0 90 0"/></body>
    </worldbody></mujoco>"""
    model = mb.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    theirs = sorted((tuple(sorted((m.geom(int(c.geom1)).name, m.geom(int(c.geom2)).name))), tuple(np.round(c.pos, 9)),
                     c.dist, tuple(np.abs(c.frame[:3]))) for c in d.contact[:d.ncon])
    sim = mb.Simulator(model, dt=1e-3, q0=d.qpos.copy(), contact_distance=0.0)
    sim.step()  # the contacts of a step are those at its start configuration
    ours = sorted((tuple(sorted((c.geom1, c.geom2))), tuple(np.round(c.position, 9)), c.distance,
                   tuple(np.abs(c.frame[0]))) for c in sim.contact.contacts())
    assert len(ours) == len(theirs) >= 7  # box-floor 4, ball-box 1, capsule-floor 2
    for a, b in zip(ours, theirs):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], atol=1e-9)
        assert a[2] == pytest.approx(b[2], abs=1e-9)
        np.testing.assert_allclose(a[3], b[3], atol=1e-9)
