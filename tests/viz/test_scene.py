"""The drawn scene: primitives of the right size in their body frame,
materials, mesh files read (and decimated) with trimesh, unreadable mesh
files drawn as a box with a warning naming them."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import InputError, ModelWarning
from multibody.viz.scene import DEFAULT_RGBA, MARKER_SIZE, Scene, body_colors, decimate

URDF = """<robot name="r">
  <material name="teal"><color rgba="0 0.5 0.5 1"/></material>
  <link name="base"/>
  <link name="a">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><origin xyz="0.1 0 0.2" rpy="0 1.5707963267948966 0"/><geometry><cylinder radius="0.05" length="0.4"/></geometry>
      <material name="teal"/></visual>
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry></visual>
    <visual><geometry><mesh filename="{mesh}"/></geometry></visual>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def load(tmp_path, mesh_bytes):
    (tmp_path / "part.stl").write_bytes(mesh_bytes)
    (tmp_path / "r.urdf").write_text(URDF.format(mesh="part.stl"))
    return mb.load_urdf(str(tmp_path / "r.urdf"))


def cube_stl(side):
    import trimesh
    return trimesh.creation.box(extents=(side, side, side)).export(file_type="stl")


def test_primitives_sit_in_their_body_frame_with_their_size_and_material(tmp_path):
    model = load(tmp_path, cube_stl(0.3))
    cyl, box, mesh = Scene(model).parts
    # the cylinder (axis z, length 0.4) turned about y by 90 degrees: its axis along x, centred at (0.1, 0, 0.2)
    lo, hi = cyl.vertices.min(axis=0), cyl.vertices.max(axis=0)
    assert np.allclose(lo, [-0.1, -0.05, 0.15], atol=1e-6) and np.allclose(hi, [0.3, 0.05, 0.25], atol=1e-6)
    assert cyl.rgba == (0.0, 0.5, 0.5, 1.0) and box.rgba == DEFAULT_RGBA
    assert np.allclose(box.vertices.max(axis=0), [0.05, 0.1, 0.15])
    assert np.allclose(mesh.vertices.max(axis=0) - mesh.vertices.min(axis=0), 0.3, atol=1e-6)
    assert {p.body for p in (cyl, box, mesh)} == {model.body_id("a")}


def test_body_colours_and_bad_colours(tmp_path):
    model = load(tmp_path, cube_stl(0.3))
    parts = Scene(model, colors="bodies").parts
    assert all(p.rgba[:3] == tuple(body_colors(model.nbodies)[p.body]) for p in parts)
    assert Scene(model, colors={"a": (1, 0, 0)}).parts[0].rgba == (1.0, 0.0, 0.0, 1.0)
    with pytest.raises(InputError, match="colors"):
        Scene(model, colors="rainbow")


def test_unreadable_mesh_is_drawn_as_a_box_with_a_warning_naming_it(tmp_path):
    model = load(tmp_path, b"this is not a mesh file")
    with pytest.warns(ModelWarning, match=r"part\.stl.*|geometry 'a_2'") as rec:
        parts = Scene(model).parts
    message = " ".join(str(w.message) for w in rec)
    assert "part.stl" in message and "a_2" in message and "bounding box" in message
    marker = parts[2]
    assert np.allclose(marker.vertices.max(axis=0) - marker.vertices.min(axis=0), MARKER_SIZE)
    assert len(marker.faces) == 12


def test_decimation_keeps_the_shape():
    import trimesh
    sphere = trimesh.creation.icosphere(subdivisions=5, radius=0.1)  # 20480 triangles
    V, F = decimate(sphere.vertices, sphere.faces, 1000)
    assert 500 <= len(F) <= 1000
    r = np.linalg.norm(V, axis=1)
    assert np.allclose(r, 0.1, atol=0.002)  # every vertex stays on the sphere (within 2 mm of 0.1 m)
    same = decimate(sphere.vertices, sphere.faces, None)
    assert same[1] is sphere.faces
