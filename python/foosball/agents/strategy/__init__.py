"""Strategy agent (SA) on the strategy board: BallState -> RodCommand, by the rod
behaviours of foosball.strategy.

The package: `core` (StrategyAgentCore, the pure step; `make_core`). Its settings
(`[strategy] strategy`) and build are its entry in foosball.agent_registry. What other
modules use is named here.
"""

from foosball.agents.strategy.core import Controller, StrategyAgentCore, make_core

__all__ = ["Controller", "StrategyAgentCore", "make_core"]
