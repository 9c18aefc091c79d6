"""
The process's default client, for the module-level helpers (``loupe.observe``, ``loupe.span``,
``loupe.get_prompt``…): made from the ``LOUPE_*`` variables on first use, or by ``configure``.
Decorators find it when the function runs, not when it is decorated, so ``configure`` may come
after the imports.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import httpx

from ._client import Loupe
from ._options import OptionArgs

if TYPE_CHECKING:
    from typing_extensions import Unpack

_lock = threading.Lock()
_client: Loupe | None = None


def configure(*, http_client: httpx.Client | None = None, **options: Unpack[OptionArgs]) -> Loupe:
    """Makes the default client with these options (see ``Loupe``); a previous one is flushed and shut down."""
    global _client
    client = Loupe(http_client=http_client, **options)
    with _lock:
        previous, _client = _client, client
    if previous is not None:
        previous.shutdown()
    return client


def get_client() -> Loupe:
    """The default client, made from the LOUPE_* variables on first use."""
    global _client
    client = _client
    if client is not None:
        return client
    with _lock:
        if _client is None:
            _client = Loupe()
        return _client
