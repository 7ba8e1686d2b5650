"""Over-the-air updates with RAUC: the on-board update agent and the laptop's push tool."""
