"""Command-line arguments that may name objects in a store (URLs, :mod:`kdump.storage.object_store`) and those
that never may (the places kdump writes to)."""

from __future__ import annotations

from typing import Any

import click

from kdump.storage import object_store


class LocalOutput(click.Path):
    """A local path kdump writes to: a URL is a usage error naming it (kdump never writes to a store)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and object_store.is_url(value):
            self.fail(
                f"{value}: kdump writes only to local files; an object store is read, never written "
                "(copy the data to a local directory first)",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)
