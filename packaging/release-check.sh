#!/usr/bin/env bash
# Before a release is published: the tag, the binary, the CHANGELOG and the Action must all name the
# same version, and the packages must be there under the names packaging/action/install.sh downloads.
#
#   packaging/release-check.sh vX.Y.Z [IMGBAKE [DIST]]   check; exit 1 naming each disagreement
#   packaging/release-check.sh --notes vX.Y.Z            print CHANGELOG.md's section for X.Y.Z
#
# .github/workflows/release.yml runs both after `make dist`; ReleaseTests run the check in `make test`
# with the debug binary, and see it refuse a tag that is not the version.
set -euo pipefail
cd "$(dirname "$0")/.."

notes=false
if [ "${1:-}" = --notes ]; then notes=true; shift; fi
tag=${1:?usage: release-check.sh [--notes] vX.Y.Z [IMGBAKE [DIST]]}
bin=${2:-.build/release/imgbake}
dist=${3:-}
version=${tag#v}

if $notes; then
  # From the version's heading to the next release's, both left out.
  awk -v v="$version" '/^## / { if (on) exit; if (index($0, "## " v " ") == 1) { on = 1; next } } on' CHANGELOG.md
  exit 0
fi

problems=0
fail() { echo "release-check: $*" >&2; problems=$((problems + 1)); }

[[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "the tag $tag is not vX.Y.Z"

binary=$("$bin" --version | sed -n '1s/^imgbake \([^ ]*\) .*/\1/p')
[ "$binary" = "$version" ] || fail "$bin --version says ${binary:-nothing}, the tag $tag (a +dirty build is never released)"

changelog=$(sed -n 's/^## \([0-9][0-9.]*\) — [0-9-]*$/\1/p' CHANGELOG.md | head -n1)
[ "$changelog" = "$version" ] || fail "CHANGELOG.md's latest release is ${changelog:-none}, the tag $tag"

# action.yml: the `version` input's default.
action=$(awk '/^  version:$/ { on = 1; next } on && /^  [^ ]/ { exit } on && /^    default:/ { gsub(/"/, "", $2); print $2; exit }' action.yml)
[ "$action" = "$version" ] || fail "action.yml installs ${action:-nothing} by default, the tag $tag"

# The examples users copy name a release too.
for file in Examples/ci/*.yml; do
  while read -r named; do
    [ "$named" = "$version" ] || fail "$file names imgbake $named, the tag $tag"
  done < <(sed -n -e 's/.*uses: imgbake\/imgbake@v\([0-9.]*\).*/\1/p' -e 's/.*IMGBAKE_VERSION: "\([0-9.]*\)".*/\1/p' "$file")
done

if [ -n "$dist" ]; then
  # The names install.sh downloads (the tarball, SHA256SUMS), the .deb, the wheel and the npm package
  # (packaging/npm.sh), which the workflow gives to `npm publish` by this name.
  wheel="imgbake-${version}-py3-none-manylinux_2_34_x86_64.whl"
  npm_package="imgbake-${version}.tgz"
  for name in "imgbake_${version}_amd64.deb" "imgbake-${version}-linux-x86_64.tar.gz" "$wheel" "$npm_package" SHA256SUMS; do
    [ -s "$dist/$name" ] || fail "$dist/$name is missing"
  done
  if [ -s "$dist/SHA256SUMS" ]; then
    (cd "$dist" && sha256sum --check --quiet SHA256SUMS) || fail "$dist/SHA256SUMS does not match the files"
    for name in "imgbake_${version}_amd64.deb" "imgbake-${version}-linux-x86_64.tar.gz" "$wheel" "$npm_package"; do
      grep -q " $name\$" "$dist/SHA256SUMS" || fail "$dist/SHA256SUMS does not list $name"
    done
  fi
fi

[ "$problems" = 0 ] || exit 1
echo "release-check: $tag is imgbake $version everywhere"
