"""CRC-32C (Castagnoli), the checksum of v2 record batches and producer snapshots, from the ``crc32c``
package's hardware-accelerated extension.

The package's ``__init__`` looks its own version up through ``importlib.metadata``, which costs more than the
rest of kdump's start-up together; the extension module is loaded directly instead (falling back to the
package import wherever that is not possible).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing_extensions import Buffer  # collections.abc.Buffer from Python 3.12 on


class Crc32c(Protocol):
    """``crc32c(data, value=0) -> int``: CRC-32C of ``data`` (any buffer), continuing from ``value``."""

    def __call__(self, data: Buffer, value: int = 0, /) -> int: ...


def _load() -> Crc32c:
    try:
        spec = importlib.util.find_spec("crc32c")  # locates the package without running its __init__
        for directory in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(directory, "_crc32c" + suffix)
                if os.path.exists(path):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                    module_spec = importlib.util.spec_from_file_location(
                        "crc32c._crc32c", path, loader=loader
                    )
                    if module_spec is None:
                        continue
                    module = importlib.util.module_from_spec(module_spec)
                    loader.exec_module(module)
                    # the module is loaded by path, so mypy cannot know it is crc32c._crc32c (typed in its .pyi)
                    function: Crc32c = module.crc32c
                    return function
    except (ImportError, OSError, AttributeError, ValueError):
        pass
    from crc32c import crc32c as package_crc32c

    return package_crc32c


#: ``crc32c(data, value=0) -> int``: CRC-32C of ``data`` (any buffer), continuing from ``value``.
crc32c: Crc32c = _load()
