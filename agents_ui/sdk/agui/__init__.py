"""AG-UI 1.0 (docs/PROTOCOLS.md section 1): the client (``client``), the fold of its events into the
transcript (``fold``), the message history a run sends back (``thread_messages``) and the generic
tools a client offers an agent (``client_tools``)."""
