"""Compiles the codec's hot modules with mypyc, in place: `cluster/protocol/{types,schema,records}.py` become
extension modules beside their sources (one shared library, `codec__mypyc.*.so`, and a small shim per
module), which Python's import prefers. Nothing is installed and nothing is committed (.gitignore).

    .venv/bin/python setup_codec_compiled.py            # build (about 25 CPU-seconds), skipped when up to date
    .venv/bin/python setup_codec_compiled.py --force    # build even when up to date
    .venv/bin/python setup_codec_compiled.py --clean    # remove the built modules: the pure ones run

The pure-Python modules stay the fallback: without the built files, with a source newer than them (see
`kafkaops.cluster.protocol`), or with KAFKAOPS_PURE_PYTHON=1. `.ci/setup` runs this and goes on without
it when the build fails. mypyc reads pyproject.toml's [tool.mypy] for the module names (`.mypy-src/`).
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
PACKAGE_DIR = os.path.join(ROOT, "cluster", "protocol")
# kept in step with kafkaops.cluster.protocol.COMPILED (a test checks)
MODULES = ("types", "schema", "records")
GROUP = "kafkaops.cluster.protocol.codec"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def built_files() -> list[str]:
    names = [f"{GROUP.rpartition('.')[2]}__mypyc", *MODULES]
    return [os.path.join(PACKAGE_DIR, name + SUFFIX) for name in names]


def up_to_date() -> bool:
    built = built_files()
    if not all(os.path.exists(path) for path in built):
        return False
    oldest = min(os.path.getmtime(path) for path in built)
    return all(os.path.getmtime(os.path.join(PACKAGE_DIR, f"{m}.py")) <= oldest for m in MODULES)


def clean() -> None:
    for path in glob.glob(os.path.join(PACKAGE_DIR, "*.so")):
        os.remove(path)


def build() -> None:
    # imported here: --clean and an up-to-date check need neither mypyc nor setuptools
    from mypyc.build import mypycify
    from setuptools import Distribution

    os.chdir(ROOT)  # mypyc finds pyproject.toml's [tool.mypy] (mypy_path = .mypy-src) in the working directory
    sources = [os.path.join(".mypy-src", "kafkaops", "cluster", "protocol", f"{m}.py") for m in MODULES]
    with tempfile.TemporaryDirectory(prefix="kafkaops-mypyc-") as work:
        extensions = mypycify(sources, group_name=GROUP, target_dir=os.path.join(work, "c"))
        distribution = Distribution({"name": "kafkaops-compiled", "ext_modules": extensions})
        command = distribution.get_command_obj("build_ext")
        command.build_lib = os.path.join(work, "lib")
        command.build_temp = os.path.join(work, "tmp")
        command.parallel = os.cpu_count() or 1
        distribution.run_command("build_ext")
        clean()
        for path in glob.glob(os.path.join(work, "lib", "kafkaops", "cluster", "protocol", "*.so")):
            shutil.copy2(path, PACKAGE_DIR)
    if not up_to_date():
        sys.exit("setup_codec_compiled: the built modules are not all in place")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="build even when the built modules are up to date")
    parser.add_argument("--clean", action="store_true", help="remove the built modules")
    args = parser.parse_args()
    if args.clean:
        clean()
    elif args.force or not up_to_date():
        build()


if __name__ == "__main__":
    main()
