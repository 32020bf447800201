"""External agents with a public policy (docs/PROTOCOLS.md section 2): the policy and event models
(``policy``), the client (``client``) and the fold of their events into the transcript (``fold``)."""
