"""The embedded demo agents: deterministic agents served by the product itself under /demo-agents/.

They need no LLM and no key, speak the two protocols of docs/PROTOCOLS.md exactly as real agents do, and
declare deliberately different capabilities so the workspace visibly reshapes from one to the next.

- registry.py: which demo agents exist, and their registration as AgentEndpoints.
- agui_agents.py: the AG-UI agents (declarations and runs); external_agents.py: the policy agents.
- replies.py: answers derived from the user's words, streamed with settings.AGENTS_UI_DEMO_PACING.
- views.py / urls.py: the HTTP side.
"""
