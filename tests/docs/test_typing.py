"""Type hints of the public API: mypy finds no error in the typed modules,
and a program using the API sees their types (not Any)."""
import os
import tempfile

from mypy import api

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TYPED = ["src/multibody/spatial", "src/multibody/model", "src/multibody/io", "src/multibody/kinematics",
         "src/multibody/dynamics", "src/multibody/errors.py", "src/multibody/_typing.py",
         "src/multibody/simulation",
         # forces: the public modules (not _kernels.py, _kin.py: compiled kernels, not annotated)
         *(f"src/multibody/forces/{m}.py" for m in ("__init__", "base", "body", "joint", "springs", "muscles",
                                                    "muscle_curves", "paths", "transmission", "actuators")),
         "src/multibody/viz", "src/multibody/cli",
         # the L3/L4 packages; their compiled-kernel modules (constraints/_kernels.py, constraints/_contact.py,
         # integrators/_kernels.py) are left out like forces' kernels
         "src/multibody/formulations", "src/multibody/collision", "src/multibody/solvers",
         *(f"src/multibody/integrators/{m}.py" for m in ("__init__", "base", "explicit", "fused", "implicit", "lie",
                                                         "maximal", "particles")),
         *(f"src/multibody/constraints/{m}.py" for m in ("__init__", "contact", "contact_dynamics", "limits", "loops",
                                                         "projection"))]
# mypy's cache outside the repository, kept between runs (a cold check of these modules takes ~1 min); one
# per pass of run.py test (the compiled and the interpreted pass run side by side)
CACHE = os.path.join(tempfile.gettempdir(), f"multibody-mypy-cache-{os.environ.get('NUMBA_DISABLE_JIT', '0')}")


def _mypy(*args):
    cwd = os.getcwd()
    os.chdir(ROOT)  # pyproject.toml's [tool.mypy] applies
    try:
        return api.run(["--cache-dir", CACHE, "--no-error-summary", *args])
    finally:
        os.chdir(cwd)


def test_public_modules_type_check():
    out, err, status = _mypy(*TYPED)
    assert status == 0, out + err


USER = '''
import numpy as np
import multibody as mb

model = mb.load_urdf("src/multibody/data/robots/mb_arm.urdf")
q = model.random_configuration(seed=0)
reveal_type(model)
reveal_type(mb.jacobian(model, q, "tool", "local_world_aligned"))
reveal_type(mb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv)))
reveal_type(mb.body_motion(model, q, np.zeros(model.nv)))
mb.crba(model, q, data="workspace")
'''


def test_a_user_program_sees_the_types():
    """The hints reach a program that imports multibody (py.typed, the
    re-exports), and a wrong argument is reported."""
    out, err, status = _mypy("--follow-imports=silent", "-c", USER)
    lines = out.splitlines()
    assert any('Revealed type is "multibody.model.model.Model"' in line for line in lines), out
    arrays = [line for line in lines if "Revealed type is" in line and "numpy.ndarray" in line]
    assert len(arrays) == 3, out
    assert any('"crba" has incompatible type "str"' in line for line in lines), out
