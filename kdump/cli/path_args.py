"""Command-line arguments that may name objects in a store (URLs, :mod:`kdump.storage.object_store`) and those
that never may (the places kdump writes to)."""

from __future__ import annotations

from typing import Any

import click

from kdump.errors import KdumpError
from kdump.storage import locations, object_store


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


class Location(click.Path):
    """A path to read, or the URL of an object or prefix in a store (passed on as given: the store is asked
    when the command reads it; a URL with credentials in it is a usage error, before anything is read)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and object_store.is_url(value):
            try:
                object_store.check_url(value)
                if self.exists and not locations.exists(value):
                    self.fail(f"{self.name.title()} {value!r} does not exist.", param, ctx)
            except KdumpError as e:
                self.fail(e.describe(), param, ctx)
            return value
        return super().convert(value, param, ctx)
