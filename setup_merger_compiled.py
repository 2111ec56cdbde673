"""Compiles the state-change merger's core with Cython, in place: `statechange/merge_core.pyx` becomes an
extension module beside its source, which `kafkaops.statechange.merge.compiled_core` loads (and ignores
when the source is newer). Nothing is installed and nothing is committed (.gitignore).

    .venv/bin/python setup_merger_compiled.py            # build (a few CPU-seconds), skipped when up to date
    .venv/bin/python setup_merger_compiled.py --force    # build even when up to date
    .venv/bin/python setup_merger_compiled.py --clean    # remove the built module: the Python merge runs

`.ci/setup` runs this and goes on without it when the build fails: the block-wise merge in Python
(`statechange/merge.py`) is the fallback, also with KAFKAOPS_PURE_PYTHON=1.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(ROOT, "statechange")
MODULE = "merge_core"
SOURCE = os.path.join(PACKAGE_DIR, MODULE + ".pyx")
BUILT = os.path.join(PACKAGE_DIR, MODULE + sysconfig.get_config_var("EXT_SUFFIX"))


def up_to_date() -> bool:
    return os.path.exists(BUILT) and os.path.getmtime(SOURCE) <= os.path.getmtime(BUILT)


def clean() -> None:
    if os.path.exists(BUILT):
        os.remove(BUILT)


def build() -> None:
    # imported here: --clean and an up-to-date check need neither Cython nor setuptools
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    with tempfile.TemporaryDirectory(prefix="kafkaops-cython-") as work:
        extension = Extension(f"kafkaops.statechange.{MODULE}", [SOURCE], extra_compile_args=["-O3"])
        modules = cythonize([extension], build_dir=os.path.join(work, "c"), quiet=True)
        distribution = Distribution({"name": "kafkaops-merger-compiled", "ext_modules": modules})
        command = distribution.get_command_obj("build_ext")
        command.build_lib = os.path.join(work, "lib")
        command.build_temp = os.path.join(work, "tmp")
        distribution.run_command("build_ext")
        built = glob.glob(os.path.join(work, "lib", "kafkaops", "statechange", MODULE + ".*"))
        if len(built) != 1:
            sys.exit(f"setup_merger_compiled: expected one built module, found {built}")
        shutil.copy2(built[0], BUILT)
    if not up_to_date():
        sys.exit("setup_merger_compiled: the built module is not in place")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="build even when the built module is up to date")
    parser.add_argument("--clean", action="store_true", help="remove the built module")
    args = parser.parse_args()
    if args.clean:
        clean()
    elif args.force or not up_to_date():
        build()


if __name__ == "__main__":
    main()
