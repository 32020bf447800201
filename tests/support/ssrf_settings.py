"""The settings of scripts/attack_load.py's server: the product as deployed (benchmarks.settings),
private addresses refused as in production, and the test-only public-hop seam
(tests/support/public_hops.py) so the hostile agents on loopback are reached as public hosts while
every internal address stays refused. Never a deployment's settings: nothing else names this module."""

from benchmarks.settings import *  # noqa: F403
from tests.support.public_hops import install_from_environment

AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
install_from_environment()
