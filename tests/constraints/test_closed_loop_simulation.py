"""Simulating closed loops: the four-bar against its 1-DoF reduction by
hand (integrated with scipy's solve_ivp), loop errors with stabilization
and projection, every integrator with constraints, gears, soft
constraints (ArtiSynth §0.11)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody.constraints import Constraints
from multibody.errors import InputError
from .mechanisms import D, L1, L2, L3, crank_slider, four_bar

G = 9.81
M_ROD = 1.0


def _e(t):
    return np.array([np.cos(t), np.sin(t)])


def _ep(t):
    return np.array([-np.sin(t), np.cos(t)])


class FourBarByHand:
    """The four-bar in its plane (X = x, Y = −z, so a joint angle about y is
    a counter-clockwise angle and gravity points along +Y), reduced to the
    crank angle θ: closed-form position analysis (circle intersection),
    velocity ratios from the differentiated loop equation, and Lagrange's
    equation ``m(θ)θ̈ + ½m'(θ)θ̇² + V'(θ) = 0``."""

    def __init__(self, q0):
        self.branch = 1.0
        th2, _ = self.angles(q0[0])
        if abs(np.angle(np.exp(1j * (th2 - (q0[0] + q0[1]))))) > 1e-6:
            self.branch = -1.0
        assert abs(np.angle(np.exp(1j * (self.angles(q0[0])[0] - (q0[0] + q0[1]))))) < 1e-6

    def angles(self, th1):
        A = L1 * _e(th1)
        P = np.array([D, 0.0]) - A
        ell = np.linalg.norm(P)
        th2 = np.arctan2(P[1], P[0]) + self.branch * np.arccos((L2 ** 2 + ell ** 2 - L3 ** 2) / (2 * L2 * ell))
        C = A + L2 * _e(th2)
        th3 = np.arctan2(C[1], C[0] - D)
        return th2, th3

    def ratios(self, th1):
        th2, th3 = self.angles(th1)
        # L1 e⊥(θ1) + L2 J2 e⊥(θ2) = L3 J3 e⊥(θ3)
        J2, J3 = np.linalg.solve(np.column_stack([L2 * _ep(th2), -L3 * _ep(th3)]), -L1 * _ep(th1))
        return th2, th3, J2, J3

    def mass(self, th1):
        th2, th3, J2, J3 = self.ratios(th1)
        I1, I2, I3 = (M_ROD * L ** 2 / 12 for L in (L1, L2, L3))
        v1 = 0.5 * L1 * _ep(th1)
        v2 = L1 * _ep(th1) + 0.5 * L2 * J2 * _ep(th2)
        v3 = 0.5 * L3 * J3 * _ep(th3)
        return M_ROD * (v1 @ v1 + v2 @ v2 + v3 @ v3) + I1 + I2 * J2 ** 2 + I3 * J3 ** 2

    def potential(self, th1):
        th2, th3 = self.angles(th1)
        Y = 0.5 * L1 * np.sin(th1) + L1 * np.sin(th1) + 0.5 * L2 * np.sin(th2) + 0.5 * L3 * np.sin(th3)
        return -M_ROD * G * Y

    def rhs(self, t, x):
        th, w = x
        h = 1e-6
        dm = (self.mass(th + h) - self.mass(th - h)) / (2 * h)
        dV = (self.potential(th + h) - self.potential(th - h)) / (2 * h)
        return [w, -(0.5 * dm * w * w + dV) / self.mass(th)]


def test_four_bar_matches_its_minimal_coordinate_reduction():
    model, q0 = four_bar(theta=1.0)
    ref = FourBarByHand(q0)
    T = 10.0
    sim = mb.Simulator(model, 1e-3, "rk4", q0=q0)
    traj = sim.rollout(duration=T, record_every=100)
    sol = solve_ivp(ref.rhs, (0, T), [q0[0], 0.0], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=traj.t)
    assert np.abs(traj.q[:, 0] - sol.y[0]).max() < 1e-6
    assert np.abs(traj.v[:, 0] - sol.y[1]).max() < 1e-5
    th2 = np.array([ref.angles(t)[0] for t in sol.y[0]])
    assert np.abs(np.angle(np.exp(1j * (traj.q[:, 0] + traj.q[:, 1] - th2)))).max() < 1e-6
    assert traj.constraint_residual.max() < 1e-8
    assert np.ptp(traj.q[:, 0]) > 0.9   # a large motion (~1 rad), not a small oscillation
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-6 * abs(traj.energy).max()


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "implicit_euler", "trapezoidal", "bridson_marino",
                                        "explicit_euler", "rk4"])
def test_every_integrator_keeps_the_loops_closed(integrator):
    """The crank-slider (10 s with semi-implicit Euler and RK4, 3 s with the
    others): the loop error stays below 1e-8 with every integrator
    (stabilization and projection); RK4 conserves the energy, implicit
    Euler only dissipates it."""
    model, q0 = crank_slider()
    T = 10.0 if integrator in ("semi_implicit_euler", "rk4") else 3.0
    traj = mb.Simulator(model, 1e-3, integrator, q0=q0).rollout(duration=T, record_every=50)
    assert traj.constraint_residual.max() < 1e-8
    assert np.ptp(traj.q[:, 0]) > 0.5
    E = traj.energy
    if integrator == "rk4":
        assert np.abs(E - E[0]).max() < 1e-6 * np.abs(E).max()
    if integrator == "implicit_euler":
        assert np.all(np.diff(E) <= 1e-9 * np.abs(E).max())


def test_gear_train_coupling_and_energy():
    """Two wheels geared 1 : −3 (Featherstone §9.6), the first pulled by a
    pendulum-like offset mass: the coupling holds to 1e-10 and the gear's
    constraint force does no work (energy conserved with RK4); the wheels'
    speeds keep the ratio."""
    b = mb.ModelBuilder("gears")
    b.add_body("w1", "world", "revolute", axis=(0, 1, 0), mass=2.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.02)
    b.add_body("w2", "world", "revolute", placement=(np.eye(3), (0.5, 0, 0)), axis=(0, 1, 0), mass=1.0,
               inertia=np.eye(3) * 0.01)
    b.add_coupling("w2", "w1", multiplier=-3.0)
    model = b.build()
    sim = mb.Simulator(model, 1e-3, "rk4", q0=[0.5, -1.5])
    traj = sim.rollout(duration=5.0, record_every=10)
    assert np.abs(traj.q[:, 1] + 3.0 * traj.q[:, 0]).max() < 1e-10
    assert np.abs(traj.v[:, 1] + 3.0 * traj.v[:, 0]).max() < 1e-10
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-8
    # reflected inertia: the pair moves as a pendulum with I = I1 + 9 I2 + armature-free terms
    assert np.ptp(traj.q[:, 0]) > 0.5


def test_soft_constraint_oscillates_at_the_predicted_frequency():
    """A 2 kg slider held at the origin by a soft spherical loop joint of
    compliance α = 1e-4 m/N (stiffness 1e4 N/m): it oscillates at
    ω = √(1/(α m)) (ArtiSynth §0.11), measured from zero crossings."""
    m, alpha = 2.0, 1e-4
    b = mb.ModelBuilder("soft")
    b.add_body("slider", "world", "prismatic", axis=(1, 0, 0), mass=m, inertia=np.eye(3) * 1e-3)
    b.add_loop_joint("slider", "world", "spherical")
    model = b.build()
    omega = np.sqrt(1.0 / (alpha * m))
    for integrator in ("semi_implicit_euler", "implicit_euler", "rk4"):
        sim = mb.Simulator(model, 1e-4, integrator, gravity=False, compliance=alpha, q0=[0.01])
        traj = sim.rollout(duration=20 * 2 * np.pi / omega)
        x, t = traj.q[:, 0], traj.t
        up = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
        tc = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
        period = np.mean(np.diff(tc))
        assert period == pytest.approx(2 * np.pi / omega, rel=0.01), integrator
        assert sim.constraint_residual() > 0  # compliant: the constraint is not enforced exactly


def test_soft_constraint_damping_decays_like_a_damped_oscillator():
    """With damping β the amplitude decays as exp(−βω²t/2) (force
    −α⁻¹(φ + βφ̇): damping coefficient β/α)."""
    m, alpha, beta = 2.0, 1e-4, 1e-3
    b = mb.ModelBuilder("soft")
    b.add_body("slider", "world", "prismatic", axis=(1, 0, 0), mass=m, inertia=np.eye(3) * 1e-3)
    b.add_loop_joint("slider", "world", "spherical")
    sim = mb.Simulator(b.build(), 1e-5, "rk4", gravity=False, compliance=alpha, constraint_damping=beta,
                       q0=[0.01])
    T = 0.2
    traj = sim.rollout(duration=T, record_every=10)
    E = traj.energy
    rate = beta / alpha / m   # energy decays like exp(−(c/m) t), c = β/α
    assert E[-1] / E[0] == pytest.approx(np.exp(-rate * T), rel=0.05)


def test_constraint_input_errors_in_the_simulator():
    model, q0 = four_bar()
    with pytest.raises(InputError, match="compliance"):
        mb.Simulator(model, 1e-3, compliance=-1.0)
    with pytest.raises(InputError, match="symplectic_euler.*constraints"):
        mb.Simulator(model, 1e-3, "symplectic_euler")
    with pytest.raises(InputError, match="not a constraint"):
        mb.Simulator(model, 1e-3, constraints=["nonsense"])
    assert Constraints(model).size == 5


def test_urdf_mimic_joints_are_enforced():
    """A URDF gripper whose second finger mimics the first (multiplier −1,
    offset 0.01): the simulator enforces the coupling."""
    urdf = """<robot name="gripper">
      <link name="base"/>
      <link name="left"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0"
        iyz="0"/></inertial></link>
      <link name="right"><inertial><mass value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0"
        iyz="0"/></inertial></link>
      <joint name="left" type="prismatic"><parent link="base"/><child link="left"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
      <joint name="right" type="prismatic"><parent link="base"/><child link="right"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="10" velocity="10"/><mimic joint="left" multiplier="-1" offset="0.01"/>
      </joint>
    </robot>"""
    model = mb.load_urdf(urdf)
    sim = mb.Simulator(model, 1e-3, "semi_implicit_euler")
    traj = sim.rollout(duration=0.3, controller=lambda t, q, v: np.array([0.5, 0.0]))
    assert np.abs(traj.q[:, 1] + traj.q[:, 0] - 0.01).max() < 1e-10
    # the coupled pair moves as one body of mass 0.3 kg under 0.5 N minus the right finger's weight
    # along +z: the left finger rises, the right one sinks
    assert traj.q[-1, 0] > 0.0 > traj.q[-1, 1] - 0.01
