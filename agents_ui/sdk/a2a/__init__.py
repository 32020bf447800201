"""A2A agents (Agent2Agent 1.0, docs/PROTOCOLS.md): the client over the official ``a2a-sdk``
(``client``) and the fold of its stream responses into the transcript (``fold``)."""
