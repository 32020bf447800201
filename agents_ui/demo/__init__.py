"""The embedded demo agents: deterministic agents served by the product itself under /demo-agents/.

They need no LLM and no key, speak the two protocols of docs/PROTOCOLS.md exactly as real agents do, and
declare deliberately different capabilities so the workspace visibly reshapes from one to the next.

- registry.py: which demo agents exist, what answers each one's routes, and their registration as
  AgentEndpoints.
- agui/: the AG-UI agents, one module each, beside base.py (what they share) and running.py (the run
  envelope).
- external/: the external-policy agents, one module each, beside base.py, errors.py and store.py.
- replies.py: answers derived from the user's words, streamed with settings.AGENTS_UI_DEMO_PACING.
- views.py / urls.py: the HTTP side.
"""
