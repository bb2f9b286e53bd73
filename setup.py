"""Build of the optional C accelerator (``kdump._speedups``); everything else is in pyproject.toml.

The extension is optional: without a C compiler the install goes on and kdump uses its pure-Python decoder,
which produces the same records (the tests run both).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kdump._speedups", ["kdump/_speedups.c"], optional=True)])
