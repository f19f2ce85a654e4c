"""SRDF companion files against Pinocchio.

For robots of example-robot-data with an SRDF: the collision pairs that
remain after ``pin.GeometryModel.addAllCollisionPairs`` and
``pin.removeCollisionPairs(model, geom_model, srdf)`` are exactly the pairs
of collision geometries on different bodies whose links are not in
``model.excluded_link_pairs``; and every ``model.reference_postures[name]``
equals ``pin.loadReferenceConfigurations``'s (converted: quaternions scalar
first, continuous joints one angle).
"""
import os
import pickle
import warnings

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import ModelFileError, ModelWarning
from oracles import Mapping, robots_dir

ROOT = robots_dir()
SHARE = os.path.dirname(os.path.dirname(ROOT))
CASES = [("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf", True),
         ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf", True),
         ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf", False),
         ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf", False),
         ("go1_description/urdf/go1.urdf", "go1_description/srdf/go1.srdf", True),
         ("romeo_description/urdf/romeo_small.urdf", "romeo_description/srdf/romeo_small.srdf", True)]


def load(urdf, srdf, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)  # inertias, dangling SRDF names: checked elsewhere
        return mb.load_urdf(os.path.join(ROOT, urdf), floating_base=floating, srdf=os.path.join(ROOT, srdf))


def pin_models(urdf, srdf, floating):
    path = os.path.join(ROOT, urdf)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    gm = pin.buildGeomFromUrdf(pm, path, pin.COLLISION, package_dirs=[SHARE])
    gm.addAllCollisionPairs()
    pin.removeCollisionPairs(pm, gm, os.path.join(ROOT, srdf))
    pin.loadReferenceConfigurations(pm, os.path.join(ROOT, srdf))
    return pm, gm


def keyed(model_geoms, link_of):
    """geometry -> (link, rank among that link's geometries): names differ between libraries."""
    seen, out = {}, {}
    for g in model_geoms:
        link = link_of(g)
        out[id(g)] = (link, seen.setdefault(link, 0))
        seen[link] += 1
    return out


@pytest.mark.parametrize("urdf, srdf, floating", CASES, ids=[c[1].split("/")[-1][:-5] for c in CASES])
def test_remaining_pairs_and_postures_match_pinocchio(urdf, srdf, floating):
    model = load(urdf, srdf, floating)
    pm, gm = pin_models(urdf, srdf, floating)
    objs = list(gm.geometryObjects)
    pk = keyed(objs, lambda go: pm.frames[go.parentFrame].name)
    theirs = {frozenset((pk[id(objs[cp.first])], pk[id(objs[cp.second])])) for cp in gm.collisionPairs}
    geoms = model.collision_geometries
    ok = keyed(geoms, lambda g: g.link)
    excluded = {frozenset(p) for p in model.excluded_link_pairs}
    ours = {frozenset((ok[id(a)], ok[id(b)])) for i, a in enumerate(geoms) for b in geoms[i + 1:]
            if a.body != b.body and frozenset((a.link, b.link)) not in excluded}
    assert ours == theirs
    assert len(model.excluded_link_pairs) > 0 or "romeo" in srdf  # romeo_small.srdf disables nothing

    names = [entry.key() for entry in pm.referenceConfigurations]
    assert sorted(model.reference_postures) == sorted(names)
    mp = Mapping(model, pm)
    for name in names:
        qp = pm.referenceConfigurations[name]
        np.testing.assert_allclose(model.reference_postures[name], mp.q_from_pin(qp), atol=1e-12, err_msg=name)
        assert not model.reference_postures[name].flags.writeable


def test_talos_half_sitting_and_load_srdf_returns_a_new_model():
    urdf, srdf, _ = CASES[0]
    model = mb.load_urdf(os.path.join(ROOT, urdf), floating_base=True, meshes="skip")
    with_srdf = mb.load_srdf(model, os.path.join(ROOT, srdf))
    assert model.excluded_link_pairs == () and len(model.reference_postures) == 0  # unchanged
    q = with_srdf.reference_postures["half_sitting"]
    # root_joint value "0. 0. 1.01927 0. 0. 0. 1." (x y z qx qy qz qw) -> (p, w, x, y, z)
    np.testing.assert_array_equal(q[:7], (0, 0, 1.01927, 1, 0, 0, 0))
    again = pickle.loads(pickle.dumps(with_srdf))
    np.testing.assert_array_equal(again.reference_postures["half_sitting"], q)
    assert again.excluded_link_pairs == with_srdf.excluded_link_pairs


URDF = """<robot name="r"><link name="base"/><link name="a"/><link name="tip"/><link name="b"/>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><limit lower="0.5" upper="1" effort="1" velocity="1"/></joint>
  <joint name="fix" type="fixed"><parent link="a"/><child link="tip"/></joint>
  <joint name="jb" type="continuous"><parent link="a"/><child link="b"/></joint></robot>"""


def test_srdf_edge_cases():
    srdf = """<robot name="r">
      <disable_collisions link1="a" link2="tip" reason="Adjacent"/>
      <disable_collisions link1="b" link2="base"/><disable_collisions link1="base" link2="b"/>
      <disable_collisions link1="ghost" link2="a"/>
      <group_state name="home" group="all"><joint name="jb" value="0.3"/><joint name="nope" value="1"/></group_state>
      <group_state name="bad" group="all"><joint name="ja" value="0.7 0.1"/></group_state>
      <group_state name="home" group="arm"><joint name="jb" value="9"/></group_state></robot>"""
    with pytest.warns(ModelWarning, match="no mass or inertia"):  # (massless links: irrelevant here)
        model = mb.load_urdf(URDF)
    with pytest.warns(ModelWarning) as rec:
        out = mb.load_srdf(model, srdf)
    text = " ".join(str(w.message) for w in rec)
    assert "(ghost, a)" in text and "joint 'nope' is not in the model" in text
    assert "'bad': joint 'ja': a revolute joint takes 1 value(s), got 2" in text
    assert "'home' is defined more than once; the first is kept" in text
    # a and tip are one body (fixed joint): dropped; the duplicate (b, base) recorded once, in frame order
    assert out.excluded_link_pairs == (("base", "b"),)
    np.testing.assert_array_equal(out.reference_postures["home"], (0.5, 0.3))  # ja at neutral (clipped)
    np.testing.assert_array_equal(out.reference_postures["bad"], model.neutral())
    with pytest.raises(ModelFileError, match="disable_collisions> 0 needs attributes link1 and link2"):
        mb.load_srdf(model, '<robot name="r"><disable_collisions link1="a"/></robot>')
    with pytest.raises(ModelFileError, match="not well-formed"):
        mb.load_srdf(model, "<robot")
    with pytest.raises(mb.InputError, match="expected a multibody Model"):
        mb.load_srdf("model.urdf", srdf)
