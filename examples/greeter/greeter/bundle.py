"""The ``greeter`` bundle: what a fixture with ``bundles: [greeter]`` hosts.

pyproject.toml names it in the ``fakeapi.bundles`` entry-point group, so an
installed project needs nothing else; ``fakeapi run -p greeter.bundle`` loads
it from a source checkout.
"""

from __future__ import annotations

from typing import Any

from fakeapi.harness import Bundle
from fakeapi.host import Host

from greeter.controller import CONTROLLER, CRD, setup


def install(host: Host, settings: dict[str, Any]) -> None:
    """Serve the Greeting kind and host the controller (``settings`` is the case's ``services.greeter``)."""
    host.api.register_crd(CRD)
    setup(host)


bundle = Bundle(
    name="greeter",
    install=install,
    controllers=(CONTROLLER,),
    kinds=("Greeting", "greetings", "greeting"),
    description="The Greeting controller of the fakeapi example project.",
)
