"""Motor driving agent (MDA): the EtherCAT master's brain on the pole board.

`MotorDriverCore.step(Inputs) -> Outputs` is pure: the drives' process data and working
counter (a `BusSample`) and the wire messages in; the drives' outputs and the wire messages
out. It runs in the shared agent runtime (foosball.runtime) with `EtherCatHardware`
as its hardware: the cycle thread runs SCHED_FIFO at the top priority, the runtime's I/O
thread (decoding, heartbeats, deadlines) below it.

Per axis: enable (CiA 402: fault reset -> shutdown -> switch on -> enable operation),
rotor alignment, then for translation axes the zero-match homing (run towards the end
switch until it is active, back off slowly until it releases: that edge is zero), then
position commands in motor radians and rad/s, followed with a speed- and
acceleration-limited profile in cyclic synchronous position mode.

Faults (seed paper): a drive fault stops commanding that drive and quick-stops all the
others; so do link loss, working-counter errors beyond a small tolerance and any fault the
runtime's latch holds (another agent's alarm, a silent peer). The MDA's own cause is one of
its Outputs' causes while present, and the runtime announces it. The fault latches: the MDA
watches for the cause to clear, and only a RESTART (which the runtime passes on only when
no cause is left anywhere) re-enables, re-aligns and re-homes. Anything it is unsure of (an
unknown drive state, a timeout) is a fault too.

The package, one responsibility a module: config (AxisSetup, MotorDriverConfig), records
(the phases, the cycle's inputs and outputs, the per-axis state), core (MotorDriverCore:
the cycle, messages, profile, outputs, status) with its two parts faults (bus health, the
latch, a cause clearing) and startup (enable, alignment, homing), hardware
(EtherCatHardware, AlignmentReader), build (homing_objects, open_motor_driver). Import
from the package: it names what other code uses.
"""

from foosball.agents.motor_driver.build import IO_PRIORITY, homing_objects, open_motor_driver
from foosball.agents.motor_driver.config import (
    AxisSetup,
    MotorDriverConfig,
    axes_from_table,
    default_axes,
)
from foosball.agents.motor_driver.core import MotorDriverCore
from foosball.agents.motor_driver.faults import Latched
from foosball.agents.motor_driver.hardware import (
    P99_CYCLES,
    EtherCatHardware,
    lowest_al_state,
    out_of_op,
)
from foosball.agents.motor_driver.records import (
    PHASE_STATE,
    BusSample,
    MdaInputs,
    MdaOutputs,
    Phase,
)

__all__ = [
    "IO_PRIORITY",
    "P99_CYCLES",
    "PHASE_STATE",
    "AxisSetup",
    "BusSample",
    "EtherCatHardware",
    "Latched",
    "MdaInputs",
    "MdaOutputs",
    "MotorDriverConfig",
    "MotorDriverCore",
    "Phase",
    "axes_from_table",
    "default_axes",
    "homing_objects",
    "lowest_al_state",
    "open_motor_driver",
    "out_of_op",
]
