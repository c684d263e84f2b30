#!/usr/bin/env bash
# Builds busybox from its upstream source, as Debian's mirror ships it (the
# orig tarball, checked against the sum Debian publishes), without Debian's
# patches, statically linked, into BIN/busybox. Debian's own busybox reverts
# upstream's ash so that it drops environment variables whose names are not
# shell names (ConfigMap keys such as data-1); the suite's busybox is
# upstream's and keeps them, and the suite reads ash's own messages.
#
#   test/conformance/images/busybox.sh BIN
set -euo pipefail
# Build variables of the caller (make test exports Go's LDFLAGS) are not
# busybox's.
unset LDFLAGS CFLAGS CPPFLAGS CC
bin=${1:?usage: $0 BIN}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
version=1.35.0
sum=faeeb244c35a348a334f4a59e44626ee870fb07b6884d68c10ae8bc19f83a694
url=http://deb.debian.org/debian/pool/main/b/busybox/busybox_$version.orig.tar.bz2

stamp="$version $sum"
if [ -x "$bin/busybox" ] && [ "$(cat "$bin/busybox.source" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building busybox $version from its upstream source"
curl -fsS --retry 3 -o "$work/src.tar.bz2" "$url"
echo "$sum  $work/src.tar.bz2" | sha256sum -c --quiet
tar -xjf "$work/src.tar.bz2" -C "$work"
cd "$work/busybox-$version"
make -s defconfig >/dev/null
sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/' .config
# Static glibc warns about getpwnam and friends in a static binary; the
# image carries its own /etc/passwd and /etc/group, which is all they read.
make -s -j"$(nproc)" busybox >build.log 2>&1 || { tail -40 build.log >&2; exit 1; }
install -D -m 0755 busybox "$bin/busybox"
echo "$stamp" >"$bin/busybox.source"
