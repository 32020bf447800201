"""Runs: the user's message in (inputs), the agent's events out (live), written in batches
(writer), read back from the event log (event_log, history)."""
