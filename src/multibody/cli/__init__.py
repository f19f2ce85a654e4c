"""The command line of multibody (L6): ``multibody COMMAND …``, also
``python -m multibody COMMAND …``.

Commands: ``info`` (what a model file holds), ``simulate`` (a rollout,
saved, plotted, exported as HTML or shown), ``view`` (a model or a saved
trajectory in the viewer), ``convert`` (trajectories, .npz <-> .csv,
lossless), ``bench`` (a quick timing of the user-facing calls), ``demo``
(the showcase). ``docs/cli.md`` describes each.

Exit status: 0 success; 1 an error (a bad or missing file, a model the
command cannot use, a simulation that failed), reported as one line
``multibody: error: …`` on stderr (``--debug`` prints the traceback);
2 a usage error (unknown command or option, missing or malformed
argument; argparse's message and the usage line); 130 interrupted
(Ctrl-C)."""
import argparse
import sys
import traceback
import warnings
from typing import Sequence

from ._common import DATA, CommandError  # noqa: F401  (DATA: the shipped robots, used by the tests and the demo)
from .demo import demo, tracking_demo  # noqa: F401

PROG = "multibody"


def _positive(text):
    """argparse type: a finite number > 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not (x > 0 and x < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return x


def _port(text):
    try:
        p = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port number") from None
    if not 0 <= p <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in 0..65535, got {p}")
    return p


def parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    from .. import __version__
    from ..integrators import INTEGRATORS
    from ..simulation.simulator import CONTACT_SOLVERS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="print the traceback of an error")
    loading = argparse.ArgumentParser(add_help=False)
    loading.add_argument("--floating-base", action="store_true",
                         help="URDF: attach the root link to the world by a free joint")
    loading.add_argument("--srdf", metavar="FILE", help="URDF: an SRDF file (disabled collision pairs, postures)")

    p = argparse.ArgumentParser(
        prog=PROG, description="Articulated rigid-body dynamics and simulation. Models are URDF or MJCF files, "
        "or a shipped model: mb_arm, delta, four_bar.", epilog="multibody COMMAND --help describes a command; "
        "docs/cli.md describes them all.", parents=[common])
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("info", parents=[common, loading], help="describe a model: bodies, joints, limits, frames, "
                       "geometry", description="Print what multibody loaded from a URDF or MJCF file: sizes "
                       "(nq, nv), bodies and joints, joint limits, frames, geometry, actuators and constraints.")
    c.add_argument("model", metavar="MODEL", help="URDF or MJCF file, or a shipped model name")
    c.add_argument("--json", action="store_true", help="print the description as JSON")

    c = sub.add_parser("simulate", parents=[common, loading], help="simulate a model and save, plot or show it",
                       description="Simulate MODEL from its neutral configuration at rest (or --q0), with no "
                       "joint forces or a PD controller, and write the trajectory, a plot and an HTML animation.")
    c.add_argument("model", metavar="MODEL", help="URDF or MJCF file, or a shipped model name")
    c.add_argument("--duration", type=_positive, default=1.0, help="simulated time, s (default 1)")
    c.add_argument("--dt", type=_positive, default=1e-3, help="time step, s (default 0.001)")
    c.add_argument("--integrator", default="semi_implicit_euler", choices=sorted(INTEGRATORS),
                   help="default semi_implicit_euler")
    c.add_argument("--controller", choices=("none", "pd", "computed_torque"), default=None,
                   help="pd: PD with gravity compensation toward --target; computed_torque: exact tracking of "
                   "the error dynamics (default none; pd if --target is given)")
    c.add_argument("--target", nargs="+", metavar="Q", help="the controller's target: nq numbers, or JOINT=VALUE "
                   "words (other joints keep their initial value); default: the initial configuration")
    c.add_argument("--kp", nargs="+", metavar="K", help="stiffness gains: one number or nv numbers (default: "
                   "docs/cli.md)")
    c.add_argument("--kd", nargs="+", metavar="K", help="damping gains: one number or nv numbers")
    c.add_argument("--q0", nargs="+", metavar="Q", help="initial configuration: nq numbers or JOINT=VALUE words "
                   "(default: neutral)")
    c.add_argument("--ground", action="store_true", help="add a ground plane z = 0 with contact")
    c.add_argument("--contact-solver", default="pgs", choices=CONTACT_SOLVERS + ("none",),
                   help="default pgs; none: no contact (geometry ignored)")
    c.add_argument("--out", metavar="TRAJ.npz", help="write the trajectory (multibody view TRAJ.npz replays it)")
    c.add_argument("--plot", metavar="PNG", help="write a plot: energy, drift, joint positions by name")
    c.add_argument("--html", metavar="HTML", help="write an animation as a self-contained HTML page")
    c.add_argument("--view", action="store_true", help="show the run live in the viewer (paced to real time), then play it back")
    c.add_argument("--port", type=_port, help="the viewer's port (default: a free one)")

    c = sub.add_parser("view", parents=[common, loading], help="show a model or replay a trajectory",
                       description="Show MODEL (at its neutral configuration or --q) or replay the trajectory "
                       "file TRAJ (.npz from multibody simulate: its model is the file it names, or --model) in "
                       "the viewer, or write it as an HTML page.")
    c.add_argument("file", metavar="MODEL|TRAJ", help="a model (URDF, MJCF, shipped name) or a trajectory .npz")
    c.add_argument("--model", metavar="MODEL", help="the trajectory's model (default: the file it names)")
    c.add_argument("--q", nargs="+", metavar="Q", help="a model's configuration: nq numbers or JOINT=VALUE words")
    c.add_argument("--html", metavar="HTML", help="write an HTML page instead of starting the viewer")
    c.add_argument("--port", type=_port, help="the viewer's port (default: a free one)")

    c = sub.add_parser("convert", parents=[common], help="convert a trajectory, .npz <-> .csv (lossless)",
                       description="Convert a trajectory between .npz (Trajectory.save) and .csv, both ways, "
                       "without loss (docs/cli.md). Model files are not converted: no conversion between URDF "
                       "and MJCF is lossless.")
    c.add_argument("source", metavar="IN")
    c.add_argument("target", metavar="OUT")

    c = sub.add_parser("bench", parents=[common, loading], help="time the user-facing calls on a model",
                       description="Time forward kinematics, Jacobian, RNEA, CRBA, ABA, Simulator.step and "
                       "rollout on MODEL (default: the shipped arm). A quick subset of python3 run.py bench.")
    c.add_argument("model", metavar="MODEL", nargs="?", default="mb_arm")
    c.add_argument("--integrators", nargs="+", default=["semi_implicit_euler", "rk4"],
                   choices=sorted(INTEGRATORS), metavar="NAME", help="default: semi_implicit_euler rk4")
    c.add_argument("--steps", type=int, default=1000, help="steps per timed rollout (default 1000)")
    c.add_argument("--repeat", type=int, default=5, help="timed loops per call, the best is kept (default 5)")

    c = sub.add_parser("demo", parents=[common], help="the showcase: a robot arm tracking a trajectory",
                       description="Load a robot (default: the shipped 7-DoF arm), print its structure and "
                       "kinematics, simulate computed-torque tracking, and write a plot, the trajectory and "
                       "(with the viewer) an HTML animation.")
    c.add_argument("urdf", metavar="MODEL", nargs="?", help="URDF file (default: the shipped 7-DoF arm)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--duration", type=_positive, default=5.0, help="simulated seconds (default 5)")
    c.add_argument("--out", default="out", help="folder for the report (default out)")
    c.add_argument("--open", action="store_true", help="open the HTML animation in a web browser")
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line: ``multibody: ModelWarning: …``."""
    print(f"{PROG}: {category.__name__}: {message}", file=sys.stderr if file is None else file)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns
    the exit status. Called with ``argv=None`` (the console script,
    ``python -m multibody``), an unexpected exception (a bug) is also
    reported as one line; called with a list (from Python), it propagates."""
    console = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    if not argv:
        p.print_help()
        return 0
    try:
        args = p.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2): argparse has printed why
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:  # only options (--debug)
        p.print_help()
        return 0
    debug = getattr(args, "debug", False)
    from ..errors import MultibodyError
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return _run(args, p) or 0
        except SystemExit as e:  # a usage error found after parsing (parser.error has printed it)
            return e.code if isinstance(e.code, int) else 2
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
        except (CommandError, MultibodyError, OSError, ImportError) as e:
            if debug:
                traceback.print_exc()
            print(f"{PROG}: error: {_one_line(e)}", file=sys.stderr)
            return 1
        except Exception as e:
            if not console:
                raise
            if debug:
                traceback.print_exc()
            print(f"{PROG}: internal error (a bug; --debug shows the traceback): {type(e).__name__}: "
                  f"{_one_line(e)}", file=sys.stderr)
            return 1


def _one_line(e):
    """The message of ``e`` on one line."""
    text = str(e) or type(e).__name__
    if isinstance(e, OSError) and e.filename is not None:
        text = f"{e.strerror or text}: '{e.filename}'"
    return " ".join(text.split())


def _run(args, p):
    from ._common import load_model

    if args.command == "info":
        from .info import info
        model, path, options = load_model(args.model, args.floating_base, args.srdf)
        info(model, path, options["format"], as_json=args.json)
    elif args.command == "simulate":
        return _simulate(args, p)
    elif args.command == "view":
        from .view import view
        view(args.file, args.model, args.floating_base, args.srdf, q=args.q, html=args.html, port=args.port)
    elif args.command == "convert":
        from .convert import convert
        convert(args.source, args.target)
    elif args.command == "bench":
        from .bench import bench
        if args.steps < 1 or args.repeat < 1:
            p.error("--steps and --repeat must be at least 1")
        model, _, _ = load_model(args.model, args.floating_base, args.srdf)
        bench(model, integrators=tuple(args.integrators), steps=args.steps, repeat=args.repeat)
    elif args.command == "demo":
        from .demo import run_demo
        run_demo(args.urdf, args.seed, args.duration, args.out, open_browser=args.open)
    return 0


def _simulate(args, p):
    from ._common import load_model, parse_numbers, parse_configuration, viz_function
    from .simulate import computed_torque_controller, output_folder, pd_controller, simulate

    kind = args.controller or ("pd" if args.target is not None else "none")
    if kind == "none" and (args.target or args.kp or args.kd):
        p.error("--target, --kp and --kd need --controller pd or computed_torque")  # exits with status 2
    for path, what in ((args.out, "--out"), (args.plot, "--plot"), (args.html, "--html")):
        if path:
            output_folder(path, what)
    # the viewer and the plot are optional extras: fail before the simulation, not after it
    if args.plot:
        viz_function("plot_trajectory", "--plot")
        import matplotlib  # noqa: F401  (the plot's one dependency; ImportError names it)
    if args.html:
        viz_function("export_html", "--html")
    if args.view:
        viz_function("Viewer", "--view")
    model, _, options = load_model(args.model, args.floating_base, args.srdf)
    q0 = None if args.q0 is None else parse_configuration(model, args.q0, model.neutral(), "--q0")
    controller = None
    if kind != "none":
        start = model.neutral() if q0 is None else q0
        target = start if args.target is None else parse_configuration(model, args.target, start, "--target")
        gains = []
        for values, what in ((args.kp, "--kp"), (args.kd, "--kd")):
            g = None if values is None else parse_numbers(" ".join(values).replace(",", " ").split(), what)
            if g is not None and g.shape not in ((1,), (model.nv,)):
                raise CommandError(f"{what} takes 1 or nv = {model.nv} numbers, got {g.size}")
            gains.append(None if g is None else (g[0] if g.size == 1 else g))
        controller = (pd_controller if kind == "pd" else computed_torque_controller)(model, target, *gains)
    solver = None if args.contact_solver == "none" else args.contact_solver
    simulate(model, options, args.duration, args.dt, args.integrator, q0=q0, controller=controller,
             ground=args.ground, contact_solver=solver, out_path=args.out, plot=args.plot, html=args.html,
             view=args.view, port=args.port)
    return 0
