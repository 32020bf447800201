"""What tests, benchmarks and scripts run the product against; none of it is part of the product.

- `live_server`: uvicorn serving an ASGI application from a thread of this process (`ThreadedUvicorn`),
  and the product's own application served that way (`LiveASGIServer`), so streaming really streams;
- `fault_agent`: an AG-UI agent that misbehaves on request (one fault per path), for the fault and
  bad-input suites and the reliability report (`make reliability`).
"""
