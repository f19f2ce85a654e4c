"""Collision geometry in ModelBuilder and Model: defaults (MuJoCo's), the
checks of add_geometry, meshes on static and moving bodies, explicit pairs
and exclusions, with_ground, pickling."""
import pickle
import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.collision.shapes import SHAPE_NAMES
from multibody.errors import ModelError, ModelWarning
from multibody.model.geometry import SHAPES

CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])


def cube_faces():
    """The 12 outward triangles of CUBE (vertex k has coordinates from the bits of k)."""
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])


def arm(**geometry):
    b = mb.ModelBuilder("g")
    b.add_body("link", "world", "revolute", mass=1.0, inertia=np.eye(3) * 0.1)
    if geometry:
        b.add_geometry("link", **geometry)
    return b


def test_shape_names_are_the_kernels():
    assert SHAPES == SHAPE_NAMES


def test_defaults_are_mujocos():
    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>")
    model = arm(shape="sphere", size=0.1).build()
    (g,) = model.collision_geometries
    np.testing.assert_array_equal(g.friction, m.geom_friction[0])
    np.testing.assert_array_equal(g.solref, m.geom_solref[0])
    np.testing.assert_array_equal(g.solimp, m.geom_solimp[0])
    assert (g.contype, g.conaffinity, g.condim, g.priority, g.margin, g.gap) == \
        (m.geom_contype[0], m.geom_conaffinity[0], m.geom_condim[0], m.geom_priority[0], m.geom_margin[0],
         m.geom_gap[0])
    assert g.restitution == 0.0 and g.link == "link" and g.body == 1
    assert model.filter_parent is True and model.collision_pairs == () and model.excluded_link_pairs == ()
    np.testing.assert_array_equal(model.collision_parent, model.parents)


@pytest.mark.parametrize("kw, message", [
    (dict(shape="sphere", size=0.1, friction=(-1, 0, 0)), "friction must be non-negative"),
    (dict(shape="sphere", size=0.1, friction=(np.nan, 0, 0)), "friction must be finite"),
    (dict(shape="sphere", size=0.1, friction=(1, 0)), "friction must be 3 number"),
    (dict(shape="sphere", size=0.1, restitution=1.5), r"restitution must be in \[0, 1\]"),
    (dict(shape="sphere", size=0.1, restitution=-0.1), r"restitution must be in \[0, 1\]"),
    (dict(shape="sphere", size=0.0), "sphere sizes must be positive"),
    (dict(shape="box", size=(1, -1, 1)), "box sizes must be positive"),
    (dict(shape="box", size=(1, 1)), "a box takes 3 size value"),
    (dict(shape="capsule", size=(0.1, np.inf)), "size must be finite"),
    (dict(shape="sphere", size=0.1, condim=2), "condim must be 1, 3, 4 or 6"),
    (dict(shape="sphere", size=0.1, condim=3.5), "condim must be an integer"),
    (dict(shape="sphere", size=0.1, margin=-0.01), "margin and gap must be non-negative"),
    (dict(shape="sphere", size=0.1, solimp=(0.9, 0.95)), "solimp must be 5 number"),
    (dict(shape="torus", size=0.1), "unknown collision shape 'torus'"),
    (dict(shape="convex"), "a convex needs vertices"),
    (dict(shape="mesh", vertices=CUBE), "a mesh needs faces"),
    (dict(shape="mesh", vertices=CUBE, faces=[[0, 1, 9]]), "faces index vertices outside"),
    (dict(shape="convex", vertices=CUBE[:4] * (1, 1, 0)), "degenerate mesh"),
    (dict(shape="sphere", size=0.1, scale=(1, 0, 1)), "scale must be 3 finite non-zero"),
])
def test_add_geometry_checks_name_the_geometry(kw, message):
    with pytest.raises(ModelError, match=f"geometry 'bad' of body 'link'.*{message}"):
        arm(name="bad", **kw).build()


def test_static_only_shapes():
    heights = np.array([[0.0, 0.1], [0.2, 0.3]])
    with pytest.raises(ModelError, match="geometry 'hill' of body 'link': a height field can only belong to a "
                                         "static body"):
        arm(shape="hfield", size=(2, 2, 0.5, 0.1), heights=heights, name="hill").build()
    with pytest.raises(ModelError, match=r"hfield heights must be finite, in \[0, size\[2\] = 0.2\]"):
        arm(shape="hfield", size=(2, 2, 0.2, 0.1), heights=heights, name="hill").build()
    b = mb.ModelBuilder()
    b.add_body("base", "world", "fixed")               # fixed to the world: static, merged into it
    b.add_geometry("base", "hfield", (2, 2, 0.5, 0.1), heights=heights, name="hill")
    b.add_geometry("world", "mesh", vertices=CUBE, faces=cube_faces(), name="rock")
    b.add_geometry("world", "plane", name="floor")
    model = b.build()
    assert [(g.name, g.shape, g.body) for g in model.collision_geometries] == \
        [("rock", "mesh", 0), ("floor", "plane", 0), ("hill", "hfield", 0)]
    rock = model.collision_geometries[0]
    assert rock.link == "world" and len(rock.faces) == 12
    np.testing.assert_array_equal(np.sort(rock.vertices, axis=0), np.sort(CUBE, axis=0))
    unmerged = mb.ModelBuilder()
    unmerged.add_body("base", "world", "fixed")
    unmerged.add_geometry("base", "mesh", vertices=CUBE, faces=cube_faces(), name="rock")
    assert unmerged.build(merge_fixed=False).collision_geometries[0].shape == "mesh"  # a static body too


def test_meshes_on_moving_bodies_become_hulls():
    rng = np.random.default_rng(0)
    inside = rng.uniform(-0.4, 0.4, size=(20, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)     # a convex mesh: no warning
        model = arm(shape="mesh", vertices=CUBE, faces=cube_faces(), name="box").build()
    (g,) = model.collision_geometries
    assert g.shape == "convex" and len(g.vertices) == 8 and len(g.faces) == 12
    # outward faces: the divergence theorem gives the cube's volume, +1
    a, b, c = (g.vertices[g.faces[:, k]] for k in range(3))
    assert abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6 - 1.0) < 1e-12
    # interior points are not hull vertices; the hull keeps the points' coordinates exactly
    pts = np.vstack([inside[:10], CUBE, inside[10:]])
    (h,) = arm(shape="convex", vertices=pts).build().collision_geometries
    np.testing.assert_array_equal(np.sort(h.vertices, axis=0), np.sort(CUBE, axis=0))
    # a non-convex mesh (a cube with one corner pushed in) is hulled with a warning naming it
    dented = CUBE.copy()
    dented[7] = (0.1, 0.1, 0.1)
    with pytest.warns(ModelWarning, match="geometry 'dent' of body 'link': the mesh is not convex"):
        (d,) = arm(shape="mesh", vertices=dented, faces=cube_faces(), name="dent").build().collision_geometries
    assert d.shape == "convex" and len(d.vertices) == 7


def test_visual_geometry_is_recorded_as_given():
    b = arm()
    b.add_geometry("link", "mesh", mesh="missing.dae", collision=False, visual=True, name="skin",
                   rgba=(1, 0, 0, 1))
    model = b.build()
    assert model.collision_geometries == () and model.visual_geometries[0].shape == "mesh"
    assert model.visual_geometries[0].vertices is None


def test_merged_links_keep_their_name_and_placement():
    b = arm()
    b.add_body("tool", "link", "fixed", placement=(np.eye(3), (0, 0, 0.5)))
    b.add_geometry("tool", "capsule", (0.05, 0.2), (np.eye(3), (0.1, 0, 0)), name="tip", friction=(0.5, 0, 0),
                   restitution=0.3, contype=4, conaffinity=2, condim=1, margin=0.01, gap=0.002, priority=1)
    (g,) = b.build().collision_geometries
    assert g.body == 1 and g.link == "tool" and g.size == (0.05, 0.2)
    np.testing.assert_array_equal(g.placement[:3, 3], (0.1, 0, 0.5))
    assert (g.friction, g.restitution, g.contype, g.conaffinity, g.condim, g.margin, g.gap, g.priority) == \
        ((0.5, 0.0, 0.0), 0.3, 4, 2, 1, 0.01, 0.002, 1)


def test_pairs_and_exclusions():
    b = arm(shape="sphere", size=0.1, name="ball")
    b.add_geometry("world", "plane", name="floor")
    b.add_collision_pair("ball", "floor", name="p", condim=1, friction=(0.1, 0.1, 0, 0, 0))
    b.exclude_collisions("link", "world")
    b.exclude_collisions("world", "link")   # the same pair: recorded once
    b.filter_parent = False
    model = b.build()
    (p,) = model.collision_pairs
    assert (p.geom1, p.geom2, p.condim, p.friction) == ("ball", "floor", 1, (0.1, 0.1, 0.0, 0.0, 0.0))
    assert model.excluded_link_pairs == (("world", "link"),) and model.filter_parent is False
    bad = arm(shape="sphere", size=0.1, name="ball")
    bad.add_collision_pair("ball", "nothing")
    with pytest.raises(ModelError, match="collision pair 'ball-nothing': no collision geometry named 'nothing'"):
        bad.build()
    bad = arm()
    bad.exclude_collisions("link", "elbow")
    with pytest.raises(ModelError, match="no link or body named 'elbow'"):
        bad.build()
    with pytest.raises(ModelError, match="condim must be 1, 3, 4 or 6"):
        arm().add_collision_pair("a", "b", condim=5)


def test_with_ground():
    model = arm(shape="sphere", size=0.1).build()
    grounded = model.with_ground(height=-0.25, friction=(0.8, 0.01, 0.001), restitution=0.5, condim=4)
    assert len(model.collision_geometries) == 1              # unchanged
    g = grounded.collision_geometries[-1]
    assert (g.name, g.shape, g.body, g.link) == ("ground", "plane", 0, "world")
    assert (g.friction, g.restitution, g.condim) == ((0.8, 0.01, 0.001), 0.5, 4)
    # the plane's surface z = height in the world: its frame's origin and normal (z axis)
    T = mb.forward_kinematics(grounded, grounded.neutral())[0] @ g.placement
    np.testing.assert_array_equal(T[:3, 3], (0, 0, -0.25))
    np.testing.assert_array_equal(T[:3, 2], (0, 0, 1))
    assert grounded.with_ground(name="other").collision_geometries[-1].friction == (1.0, 0.005, 0.0001)
    with pytest.raises(ModelError, match="already has a collision geometry named 'ground'"):
        grounded.with_ground()
    with pytest.raises(ModelError, match=r"geometry 'ground': restitution must be in \[0, 1\]"):
        model.with_ground(restitution=2)
    with pytest.raises(mb.InputError, match="height"):
        model.with_ground(height=np.nan)
    # the dynamics are those of the original model: the same table
    np.testing.assert_array_equal(grounded.tree, model.tree)


def test_no_collision_geometry_and_pickle():
    model = arm().build()
    assert model.collision_geometries == () and model.skipped_geometries == ()
    assert len(model.reference_postures) == 0
    b = arm(shape="mesh", vertices=CUBE, faces=cube_faces(), name="box")
    b.add_geometry("world", "plane", name="floor")
    model = b.build()
    again = pickle.loads(pickle.dumps(model))
    assert again.collision_geometries == model.collision_geometries
    g = again.collision_geometries[1]
    assert not g.vertices.flags.writeable and not g.faces.flags.writeable and not g.placement.flags.writeable
    with pytest.raises(ValueError):
        g.vertices[0, 0] = 1.0
    with pytest.raises(AttributeError):
        g.friction = (0, 0, 0)
    assert {g: 1}[g] == 1 and g != g.replace(restitution=0.1)
    # a parameter variant keeps the geometry (and drops no record)
    assert model.with_params({"link.mass": 2.0}).collision_geometries == model.collision_geometries
