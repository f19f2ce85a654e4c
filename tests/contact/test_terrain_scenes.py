"""Height fields and static triangle meshes in the simulator (rigid contact, PGS, the
defaults): closed forms.

* A sphere dropped on a flat height field, or on a flat two-triangle mesh floor, rests at its
  radius (penetration < 1e-6 m, never deeper) and carries its weight.
* A box resting on a two-triangle mesh floor, across the shared diagonal, rests on 4 contacts
  whose forces sum to its weight with no moment (1e-9).
* A sphere rolling (μ = 1) down a tilted two-triangle mesh moves as on an inclined plane:
  a = 5/7 g sin θ (a solid sphere rolling without slipping; frictionless, it would slide at g sin θ),
  within 1 %, crossing the internal diagonal without a hop: step for step as on the same
  plane given as a plane geometry (1e-9).
* A box on a height-field ramp (15°) with μ = 1 > tan 15° sticks.
* An MJCF height field, and an MJCF static mesh (a closed slab), stop a dropped ball.
"""
import numpy as np
import pytest

import multibody as mb

G = 9.81
FLOOR_V = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0.]])
FLOOR_F = np.array([[0, 1, 2], [0, 2, 3]])


def rotation_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rotation_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def quaternion(R):
    """(w, x, y, z) of a rotation about x or y (the scenes' tilts)."""
    w = np.sqrt(max(0.0, 1.0 + np.trace(R))) / 2
    return np.array([w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)])


def ball_on(shape, radius=0.1, mu=1.0, placement=None, **terrain):
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_body("ball", joint="free", mass=1.0, inertia=np.eye(3) * 0.4 * radius ** 2)
    b.add_geometry("ball", "sphere", (radius,), name="ball", friction=(mu, 0.005, 0.0001))
    b.add_geometry("world", shape, name="terrain", placement=placement, friction=(mu, 0.005, 0.0001), **terrain)
    return b.build()


FLAT_FIELD = dict(size=(4.0, 4.0, 0.2, 0.1), heights=np.full((21, 21), 0.1))
FLAT_MESH = dict(vertices=FLOOR_V, faces=FLOOR_F)


@pytest.mark.parametrize("shape, terrain, top", [("hfield", FLAT_FIELD, 0.1), ("mesh", FLAT_MESH, 0.0)],
                         ids=["hfield", "mesh"])
def test_a_dropped_sphere_rests_at_its_radius(shape, terrain, top):
    model = ball_on(shape, **terrain)
    q0 = model.neutral()
    q0[:3] = 0.137, -0.083, top + 0.25      # off the grid points and edges
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    traj = sim.rollout(duration=0.45)
    z = traj.q[:, 2] - top
    assert z.min() > 0.1 - 1e-6                     # never penetrates
    assert abs(z[-1] - 0.1) < 1e-6 and np.abs(traj.v[-1]).max() < 1e-9
    (c,) = sim.contact.contacts()
    on_ball = c.force if c.geom2 == "ball" else -c.force
    np.testing.assert_allclose(on_ball, [0.0, 0.0, G], rtol=1e-9, atol=1e-12)


def test_a_box_rests_on_a_mesh_floor_on_four_contacts_carrying_its_weight():
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G))
    m, (a, c, h) = 2.5, (0.3, 0.2, 0.1)
    b.add_body("box", joint="free", mass=m, inertia=m / 12 * np.diag([c * c + h * h, a * a + h * h, a * a + c * c]))
    b.add_geometry("box", "box", (a, c, h), name="box", friction=(0.5, 0.0, 0.0))
    b.add_geometry("world", "mesh", vertices=FLOOR_V, faces=FLOOR_F, name="floor")
    model = b.build()
    q0 = model.neutral()
    q0[:3] = 0.05, 0.02, 0.05 + 1e-3            # across the diagonal, 1 mm above the floor
    yaw = 0.4
    q0[3:7] = np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    sim.rollout(duration=0.2)
    contacts = sim.contact.contacts()
    assert len(contacts) == 4
    on_box = [c.force if c.geom2 == "box" else -c.force for c in contacts]
    total = sum(on_box)
    np.testing.assert_allclose(total, [0.0, 0.0, m * G], rtol=1e-9, atol=1e-9)
    moment = sum(np.cross(c.position - sim.state.q[:3], f) for c, f in zip(contacts, on_box))
    np.testing.assert_allclose(moment, 0.0, atol=1e-9)
    assert abs(sim.state.q[2] - 0.05) < 1e-6


def test_a_sphere_rolls_down_a_tilted_mesh_like_on_an_inclined_plane():
    """Also step for step as on the same plane given as a plane geometry (1e-9 m): the
    internal diagonal changes nothing. (Both sink by 1.3e-5 m over the 0.6 s: the free
    joint's position update along the screw of the rolling ball's twist, which the
    velocity-level contact does not see; the same with Lemke's method.)"""
    theta = np.radians(10.0)
    R = rotation_x(theta)          # downhill: the plane's -y
    start = np.array([0.3, 0.45, 0.1])   # plane coordinates: it rolls across the diagonal y = x
    T = 0.6
    runs = {}
    for shape, kw in (("mesh", FLAT_MESH), ("plane", {})):
        model = ball_on(shape, placement=(R, np.zeros(3)), **kw)
        q0 = model.neutral()
        q0[:3] = R @ start
        sim = mb.Simulator(model, dt=1e-3, q0=q0)
        runs[shape] = traj = sim.rollout(duration=T)
        assert sim.contact.count == 1
    traj = runs["mesh"]
    np.testing.assert_allclose(traj.q, runs["plane"].q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(traj.v, runs["plane"].v, rtol=0, atol=1e-9)
    along = (traj.q[:, :3] @ R) - start  # plane coordinates
    a = 5.0 / 7.0 * G * np.sin(theta)
    assert -along[-1, 1] == pytest.approx(0.5 * a * T * T, rel=0.01)
    assert start[1] + along[-1, 1] < start[0]                 # crossed the diagonal
    assert np.abs(along[:, 2]).max() < 2e-5 and np.all(np.diff(along[:, 2]) <= 1e-12)  # never rises
    assert np.abs(along[:, 0]).max() < 1e-9                     # straight down


def test_a_box_on_a_height_field_ramp_sticks_with_large_friction():
    theta = np.radians(15.0)
    ncol, nrow, sx = 21, 11, 2.0
    x = np.linspace(-sx / 2, sx / 2, ncol)
    heights = np.tile(0.3 + np.tan(theta) * x, (nrow, 1))   # a plane z = 0.3 + x tan θ
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G))
    m, (a, c, h) = 1.0, (0.2, 0.16, 0.1)
    b.add_body("box", joint="free", mass=m, inertia=m / 12 * np.diag([c * c + h * h, a * a + h * h, a * a + c * c]))
    b.add_geometry("box", "box", (a, c, h), name="box", friction=(1.0, 0.0, 0.0))
    b.add_geometry("world", "hfield", (sx, 1.0, 0.3 + np.tan(theta) * sx / 2 + 0.01, 0.1), heights=heights,
                   name="ramp", friction=(1.0, 0.0, 0.0))
    model = b.build()
    Rb = rotation_y(-theta)
    n = Rb[:, 2]
    q0 = model.neutral()
    x0, y0 = 0.123, 0.047
    q0[:3] = np.array([x0, y0, 0.3 + np.tan(theta) * x0]) + (0.5 * h + 1e-4) * n
    q0[3:7] = quaternion(Rb)
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    traj = sim.rollout(duration=0.5)
    assert sim.contact.count == 4
    for c in sim.contact.contacts():
        np.testing.assert_allclose(abs(c.frame[0] @ n), 1.0, atol=1e-12)   # face normals only
    drift = traj.q[-1, :3] - traj.q[100, :3]   # after landing (0.1 mm)
    assert np.abs(drift).max() < 1e-6
    assert np.abs(traj.v[-1]).max() < 1e-6


MJCF = """<mujoco><option timestep="0.001"/>
  <asset><hfield name="hill" nrow="5" ncol="6" size="1 1 0.2 0.1"
    elevation="0 0 0 0 0 0  0 1 1 1 1 0  0 1 1 1 1 0  0 1 1 1 1 0  0 0 0 0 0 0"/></asset>
  <worldbody><geom name="terrain" type="hfield" hfield="hill"/>
    <body name="ball" pos="0.05 -0.03 0.6"><freejoint/><geom name="ball" type="sphere" size="0.1" mass="1"/></body>
  </worldbody></mujoco>"""


def test_an_mjcf_height_field_collides_in_the_simulator():
    """A plateau at height 0.2 m (MuJoCo's normalized elevation 1 times size[2]); the ball
    lands on it and rests at 0.3 m."""
    model = mb.load_mjcf(MJCF)
    assert {g.shape for g in model.collision_geometries} == {"hfield", "sphere"}
    q0 = model.neutral()
    q0[:3] = 0.05, -0.03, 0.6   # MuJoCo's qpos0: the free body's position in the world
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    traj = sim.rollout(duration=0.45)
    z = traj.q[:, 2]
    assert z.min() > 0.3 - 1e-6 and abs(z[-1] - 0.3) < 1e-6
    assert sim.contact.count == 1


MJCF_MESH = """<mujoco><option timestep="0.001"/>
  <asset><mesh name="slab" vertex="-1 -1 0  1 -1 0  1 1 0  -1 1 0  -1 -1 0.1  1 -1 0.1  1 1 0.1  -1 1 0.1"
    face="0 2 1  0 3 2  4 5 6  4 6 7  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7"/></asset>
  <worldbody><geom name="slab" type="mesh" mesh="slab"/>
    <body name="ball" pos="0.3 -0.2 0.5"><freejoint/><geom name="ball" type="sphere" size="0.1" mass="1"/></body>
  </worldbody></mujoco>"""


def test_an_mjcf_static_mesh_collides_as_a_triangle_mesh():
    """A closed slab 0.1 m thick on the world: a triangle mesh (MuJoCo would collide its
    hull, here the same solid); the ball rests on its top at 0.2 m."""
    model = mb.load_mjcf(MJCF_MESH)
    assert {g.name: g.shape for g in model.collision_geometries} == {"slab": "mesh", "ball": "sphere"}
    q0 = model.neutral()
    q0[:3] = 0.3, -0.2, 0.5
    sim = mb.Simulator(model, dt=1e-3, q0=q0)
    traj = sim.rollout(duration=0.4)
    z = traj.q[:, 2]
    assert z.min() > 0.2 - 1e-6 and abs(z[-1] - 0.2) < 1e-6
    (c,) = sim.contact.contacts()
    np.testing.assert_allclose(abs(c.frame[0, 2]), 1.0, atol=1e-12)
