#!/usr/bin/env bash
# The wheel `make dist` builds: dist/imgbake-<version>-py3-none-manylinux_<glibc>_x86_64.whl, for
# `pip install` where MkDocs and Sphinx are installed. It is the Python package of integrations/python
# (the MkDocs plugin and the Sphinx extension) with the binary and the stack's libvips inside, as the
# wheel's data, so that pip puts them where the tarball has them, relative to each other:
#
#   imgbake-<version>.data/scripts/imgbake                      -> <environment>/bin/imgbake
#   imgbake-<version>.data/data/lib/imgbake/libvips-*.so.42     -> <environment>/lib/imgbake/
#
# The binary finds the library through $ORIGIN/../lib/imgbake, in a virtual environment, under --user
# and in a system prefix alike. The plugins run this binary first (integrations/python/imgbake/_run.py).
# The platform tag is the glibc floor packaging/abi-floor.sh measures on the two files.
#
# Usage (from dist.sh): packaging/wheel.sh VERSION BINARY LIBRARY LICENCES_DIR OUT_DIR
# The wheel tools (setuptools, wheel) come from PyPI into a virtual environment of the run's own.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1 binary=$2 library=$3 licences=$4 out=$5
fail() { echo "wheel: error: $*" >&2; exit 1; }
[ -x "$binary" ] && [ -f "$library" ] && [ -d "$licences" ] || fail "usage: $0 VERSION BINARY LIBRARY LICENCES_DIR OUT_DIR"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q 'setuptools>=69' 'wheel>=0.43'

# The package's own files, at this version (PEP 440 takes "0.3.0+dirty" as a local version).
cp -r integrations/python "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
sed -i "s/^__version__ = .*/__version__ = \"$version\"/" "$work/src/imgbake/__init__.py"
"$work/tools/bin/pip" wheel -q --no-deps --no-build-isolation -w "$work/pure" "$work/src"
pure=$(ls "$work"/pure/imgbake-*-py3-none-any.whl)
"$work/tools/bin/python" -m wheel unpack -d "$work/unpacked" "$pure"
root=$(echo "$work"/unpacked/imgbake-*/)
root=${root%/}
wheel_version=$(basename "$root" | sed 's/^imgbake-//')

install -D -m 0755 "$binary" "$root/imgbake-$wheel_version.data/scripts/imgbake"
install -D -m 0644 "$library" "$root/imgbake-$wheel_version.data/data/lib/imgbake/$(basename "$library")"
install -d "$root/imgbake-$wheel_version.dist-info/licenses"
cp "$licences"/* "$root/imgbake-$wheel_version.dist-info/licenses/"

mkdir -p "$work/packed"
"$work/tools/bin/python" -m wheel pack -d "$work/packed" "$root" >/dev/null
floor=$(bash packaging/abi-floor.sh "$binary" "$library" | sed -n 's/^glibc //p')
platform="manylinux_${floor/./_}_$(uname -m)"
"$work/tools/bin/python" -m wheel tags --remove --python-tag py3 --abi-tag none --platform-tag "$platform" "$work"/packed/*.whl >/dev/null
mkdir -p "$out"
made=$(ls "$work"/packed/imgbake-*-py3-none-"$platform".whl)
cp "$made" "$out/"
echo "$out/$(basename "$made")"
