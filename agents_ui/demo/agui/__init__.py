"""The AG-UI demo agents: one module per agent, the shared base and the run envelope beside them."""
