"""Install the top-level folders under one import name, `arrayscope`.

The repository keeps `formats/`, `explorer/` and `resources/` at its top level; installed,
they are `arrayscope.formats`, `arrayscope.explorer` and `arrayscope.resources`, so nothing
with a generic name lands in site-packages (the wheel's top_level.txt names `arrayscope`,
a namespace package with no code of its own).
"""
from setuptools import find_packages, setup

FOLDERS = ("formats", "explorer", "resources")

packages = [f"arrayscope.{p}" for p in find_packages(include=[f"{f}*" for f in FOLDERS])]
package_dir = {f"arrayscope.{f}": f for f in FOLDERS}

setup(packages=packages, package_dir=package_dir)
