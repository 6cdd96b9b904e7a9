"""The Misra–Gong–Towsley TCP/AQM fluid model with RED, AVQ and a PEP delay
(docs/access/fluid.md): `Setting`, `solve`, `fixed_point`, and `compare` against the
packet simulator."""

from .fixed_point import FixedPoint, fixed_point
from .model import Avq, Red, Setting
from .packet import compare, packet_scenario, run_packet
from .solver import Trajectory, default_step, solve, step_error

__all__ = ["Avq", "FixedPoint", "Red", "Setting", "Trajectory", "compare", "default_step",
           "fixed_point", "packet_scenario", "run_packet", "solve", "step_error"]
