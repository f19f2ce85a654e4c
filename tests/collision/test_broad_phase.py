"""The broad phase's bounding boxes (``collision/table.py``,
``bounding_box``) contain their geometries: every support point of the
shape (MuJoCo's own, ``mj_geomDistance`` against a far probe sphere, an
oracle no one here wrote) lies inside the box, and the box is tight along
its axes for the primitives."""
import numpy as np
import pytest

import multibody as mb
from multibody.collision.table import bounding_box

mujoco = pytest.importorskip("mujoco")

SHAPES = [("sphere", (0.3,), "0.3"), ("capsule", (0.1, 0.6), "0.1 0.3"), ("cylinder", (0.2, 0.5), "0.2 0.25"),
          ("box", (0.2, 0.4, 0.6), "0.1 0.2 0.3"), ("ellipsoid", (0.1, 0.2, 0.3), "0.1 0.2 0.3")]


@pytest.mark.parametrize("shape, size, mj_size", SHAPES)
def test_a_primitive_fits_its_bounding_box_exactly(shape, size, mj_size):
    """Along ±x, ±y, ±z the geometry's extent, measured by MuJoCo as the
    distance from a probe sphere 10 m away, reaches the box's faces (to
    1e-9 m): the box contains the shape and is tight."""
    b = mb.ModelBuilder()
    b.add_body("body", joint="free", mass=1.0, inertia=np.eye(3))
    b.add_geometry("body", shape, size, name="g")
    g = b.build().collision_geometries[0]
    centre, half = bounding_box(g)
    for axis in range(3):
        for sign in (1.0, -1.0):
            probe = np.zeros(3)
            probe[axis] = 10.0 * sign
            xml = f"""<mujoco><worldbody><geom name="a" type="{shape}" size="{mj_size}"/>
                <geom name="b" type="sphere" size="0.01" pos="{probe[0]} {probe[1]} {probe[2]}"/></worldbody></mujoco>"""
            m = mujoco.MjModel.from_xml_string(xml)
            d = mujoco.MjData(m)
            mujoco.mj_forward(m, d)
            gap = mujoco.mj_geomDistance(m, d, 0, 1, 20.0, None)
            extent = 10.0 - 0.01 - gap  # how far the shape reaches along this direction
            assert abs(extent - (sign * centre[axis] + half[axis])) < 1e-9


def test_a_hull_fits_its_bounding_box():
    """A convex hull's box is the box of its vertices: every vertex inside,
    each face touched by one."""
    rng = np.random.default_rng(3)
    points = rng.normal(size=(40, 3)) * [0.1, 0.2, 0.05] + [0.3, -0.1, 0.2]
    b = mb.ModelBuilder()
    b.add_body("body", joint="free", mass=1.0, inertia=np.eye(3))
    b.add_geometry("body", "convex", name="hull", vertices=points)
    g = b.build().collision_geometries[0]
    centre, half = bounding_box(g)
    inside = np.abs(g.vertices - centre) <= half + 1e-15
    assert inside.all()
    assert np.allclose(np.abs(g.vertices - centre).max(axis=0), half, rtol=0, atol=1e-15)
