"""The external-policy demo agents: one module per agent, the shared base beside them."""
