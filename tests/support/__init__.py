"""What tests, benchmarks and scripts run the product against; none of it is part of the product.

- `live_server`: uvicorn serving an ASGI application from a thread of this process (`ThreadedUvicorn`),
  and the product's own application served that way (`LiveASGIServer`), so streaming really streams;
- `fault_agent`: an AG-UI agent that misbehaves on request (one fault per path), for the fault and
  bad-input suites and the reliability report (`make reliability`);
- `htmx`: `HtmxClient` and `htmx_post`, requests as htmx sends them;
- `waiting`: `settle()` (every live run has ended), `until_live()` (a live run reached a state),
  `eventually()` / `eventually_sync()` (a condition holds): waits on real conditions, never a fixed
  time, each failing with what it waited for;
- `browser`: the same for browser tests (`htmx_idle`, `streams_closed`, `htmx_wired`, `painted`);
- `internal_listener`, `ssrf_site`, `public_hops`: the SSRF proof: a listener on loopback recording
  every connection, a hostile site pointing every surface inside, and the test-only seam that makes
  it reachable as a public address while the guard refuses private ones (`ssrf_settings` installs it
  in scripts/attack_load.py's server);
- `clock`: a `Clock` a test moves by hand, patched over the product's `now()` seams
  (`agents_ui.sign_in.now`, `agents_ui.endpoints.memo.now`).
"""
