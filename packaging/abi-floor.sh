#!/usr/bin/env bash
# The oldest glibc and libstdc++ the given ELF files can run with: the newest symbol version each
# refers to, over all of them (objdump -T). Prints "glibc 2.34" and "libstdc++ 3.4.21 (GLIBCXX)".
# `make dist` writes it into the tarball's INSTALL and the wheel's platform tag; `make dist-check`
# holds it at glibc 2.34 (RHEL 9, Ubuntu 22.04 and Debian 12 have 2.34 or later).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
newest() { # prefix file...
  local prefix=$1; shift
  objdump -T "$@" | grep -oE "[( ]${prefix}_[0-9.]+[) ]" | tr -d '() ' | sed "s/^${prefix}_//" | sort -V | tail -n1
}
echo "glibc $(newest GLIBC "$@")"
echo "libstdc++ $(newest GLIBCXX "$@") (GLIBCXX)"
