"""Mesh paths in URDF files are confined to their roots (issue 10, item 7):
``package://`` paths to the package folder they are found in, relative paths
to the URDF's folder (or a package dir), absolute paths to those roots when
the file exists; anything else is a ModelFileError naming the link, unless
``allow_mesh_outside=True``. The loader never opens mesh files: these tests
look at the path it resolves to."""
import os

import pytest

import multibody as mb
from multibody.errors import ModelFileError
from multibody.io import resolve_mesh


def urdf_with_mesh(filename):
    return (f'<robot name="m"><link name="base"><visual><geometry><mesh filename="{filename}"/></geometry>'
            '</visual></link></robot>')


def mesh_of(model):
    return next(g.mesh for g in model.visual_geometries if g.shape == "mesh")


@pytest.fixture
def tree(tmp_path):
    """tmp/secret.stl (outside), tmp/ws/pkg/{meshes/base.stl, urdf/}, tmp/ws/other/meshes/o.stl"""
    (tmp_path / "secret.stl").write_text("solid secret\nendsolid\n")
    pkg = tmp_path / "ws" / "pkg"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    (pkg / "meshes" / "base.stl").write_text("solid x\nendsolid x\n")
    (pkg / "urdf" / "inside.stl").write_text("solid y\nendsolid y\n")
    other = tmp_path / "ws" / "other" / "meshes"
    other.mkdir(parents=True)
    (other / "o.stl").write_text("solid o\nendsolid o\n")
    return tmp_path, pkg


def load_from(folder, filename, **kw):
    path = folder / "robot.urdf"
    path.write_text(urdf_with_mesh(filename))
    return mb.load_urdf(path, **kw)


@pytest.mark.parametrize("filename", ["package://../../../../etc/passwd", "package://pkg/../../../../etc/passwd",
                                      "package://pkg/meshes/../../../secret.stl", "package://./../secret.stl"])
def test_package_paths_that_leave_their_package_are_refused(tree, filename):
    root, pkg = tree
    for kw in ({}, {"package_dirs": [root / "ws"]}):
        with pytest.raises(ModelFileError, match=r"link 'base' <visual> 0 <mesh>: mesh .* leaves its package folder "
                                                 r"\(pass allow_mesh_outside=True"):
            load_from(pkg / "urdf", filename, **kw)
    with pytest.raises(ModelFileError, match="leaves its package folder"):
        mb.load_urdf(urdf_with_mesh(filename))  # an XML string too


@pytest.mark.parametrize("filename", ["../../../../etc/passwd", "../../../secret.stl", "file://../../../secret.stl",
                                      "meshes/../../../../secret.stl"])
def test_relative_paths_that_leave_the_model_folder_are_refused(tree, filename):
    root, pkg = tree
    with pytest.raises(ModelFileError, match=r"link 'base'.*outside the URDF's folder .*allow_mesh_outside=True"):
        load_from(pkg / "urdf", filename)


def test_absolute_paths_outside_the_roots(tree):
    root, pkg = tree
    secret = str(root / "secret.stl")
    for filename in (secret, "file://" + secret):
        with pytest.raises(ModelFileError, match="absolute path outside the URDF's folder"):
            load_from(pkg / "urdf", filename)
        assert mesh_of(load_from(pkg / "urdf", filename, allow_mesh_outside=True)) == secret
    # a missing absolute file (ROS files often name meshes of another machine) is kept, unresolved
    missing = "file:///usr/Romeo/meshes/Torso.mesh"
    assert mesh_of(load_from(pkg / "urdf", missing)) == missing
    # inside the model's folder: resolved
    inside = str(pkg / "urdf" / "inside.stl")
    assert mesh_of(load_from(pkg / "urdf", inside)) == inside


def test_allow_mesh_outside_resolves_escaping_paths(tree):
    root, pkg = tree
    secret = str(root / "secret.stl")
    assert mesh_of(load_from(pkg / "urdf", "../../../secret.stl", allow_mesh_outside=True)) == secret
    assert mesh_of(load_from(pkg / "urdf", "package://pkg/../../secret.stl", allow_mesh_outside=True)) == secret


def test_paths_inside_their_roots_resolve(tree, monkeypatch):
    root, pkg = tree
    base = str(pkg / "meshes" / "base.stl")
    urdf = pkg / "urdf"
    assert mesh_of(load_from(urdf, "inside.stl")) == str(urdf / "inside.stl")
    assert mesh_of(load_from(urdf, "file://inside.stl")) == str(urdf / "inside.stl")
    assert mesh_of(load_from(urdf, "package://pkg/meshes/base.stl")) == base          # a parent named pkg
    assert mesh_of(load_from(urdf, "package:///pkg/meshes/base.stl")) == base         # talos' empty segment
    assert mesh_of(load_from(urdf, "package://pkg/meshes/../meshes/base.stl")) == base  # stays inside
    # a relative path into the package: allowed once the package folder is a root
    with pytest.raises(ModelFileError, match="outside the URDF's folder"):
        load_from(urdf, "../meshes/base.stl")
    assert mesh_of(load_from(urdf, "../meshes/base.stl", package_dirs=[pkg])) == base
    # a sibling package: found through package_dirs or ROS_PACKAGE_PATH, not by searching the parents
    other = "package://other/meshes/o.stl"
    assert mesh_of(load_from(urdf, other)) == other
    want = str(root / "ws" / "other" / "meshes" / "o.stl")
    assert mesh_of(load_from(urdf, other, package_dirs=str(root / "ws"))) == want
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(root / "ws"))
    assert mesh_of(load_from(urdf, other)) == want


def test_resolve_mesh_directly(tree):
    root, pkg = tree
    assert resolve_mesh("package://pkg/meshes/base.stl", [str(root / "ws")]) == str(pkg / "meshes" / "base.stl")
    assert resolve_mesh("http://example.com/x.stl") == "http://example.com/x.stl"
    assert resolve_mesh("meshes/x.stl") == "meshes/x.stl"  # no folder: nothing to resolve against
    with pytest.raises(ModelFileError, match="leaves its package"):
        resolve_mesh("package://../x.stl", [str(root)])
    assert resolve_mesh("package://ws/../secret.stl", [str(root)], allow_outside=True) == str(root / "secret.stl")
    assert os.path.isabs(resolve_mesh("../secret.stl", base_dir=str(root / "ws"), allow_outside=True))


def test_example_robot_data_meshes_still_resolve():
    """Every mesh of UR5 (package://example-robot-data/...) resolves inside the package."""
    from oracles import robot_path, robots_dir
    model = mb.load_urdf(robot_path("ur5"))
    share = os.path.dirname(robots_dir())
    meshes = [g.mesh for g in model.visual_geometries + model.collision_geometries if g.shape == "mesh"]
    assert meshes and all(m.startswith(share + os.sep) and os.path.isfile(m) for m in meshes)
