"""Build of the optional C accelerators (``kdump._speedups``, ``_columns``, ``_digests``) and the man pages of an editable install; everything
else is in pyproject.toml.

The extension is optional: without a C compiler the install goes on and kdump uses its pure-Python decoder,
which produces the same records (the tests run both).
"""

import sys

from setuptools import Extension, setup
from setuptools.command.editable_wheel import editable_wheel

#: A call of a function the module does not declare (a helper renamed in the shared header) is an error, not a
#: module that builds and then fails to load with an undefined symbol.
STRICT = [] if sys.platform == "win32" else ["-Werror=implicit-function-declaration"]


class EditableWheel(editable_wheel):
    """``pip install -e .`` with the man pages: setuptools' ``editable_wheel`` means to install the data files
    as copies ("Installing data as non editable", ``_run_install("data")``) but asks the distribution for
    ``has_data()``, which does not exist (the method is ``has_data_files``), so an editable wheel carried no
    pages and ``man kdump`` found nothing.  Here the data files (``share/man/man1/*.1``) go into the editable
    wheel's ``.data`` directory, which pip installs under ``<prefix>/share/man/man1`` as for ``pip install .``:
    copies of the checkout's pages at install time (``kdump help --man`` reads the checkout's own)."""

    def _run_install(self, category: str) -> None:
        if category == "data" and self.distribution.has_data_files():
            self.run_command("install_data")
        else:
            super()._run_install(category)


setup(
    ext_modules=[
        Extension(
            f"kdump.{name}",
            [f"kdump/{name}.c"],
            depends=["kdump/_varint.h", "kdump/_batch_walk.h"],
            optional=True,
            extra_compile_args=STRICT,
        )
        for name in ("_speedups", "_columns", "_digests")
    ],
    cmdclass={"editable_wheel": EditableWheel},
)
