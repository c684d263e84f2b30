#!/usr/bin/env bash
# Builds the images upstream's e2e suite runs, under the names it expects,
# as docker archives in OUT (default _output/conformance/images), from what
# is on this machine: agnhost and nonewprivs compiled from upstream's source
# (BIN holds them), the sample API server and etcd compiled here from their
# Go modules (into BIN), busybox built from its upstream source
# (busybox.sh), and Debian's own bash, curl, dig, socat, ss, ip and OpenBSD
# netcat where the suite's images carry them. Nothing is pulled from a
# registry. docs/conformance.md lists each image and what stands in for it.
#
#   test/conformance/images/build.sh BIN OUT
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:?usage: $0 BIN OUT}
out=${2:?usage: $0 BIN OUT}
orca=$PWD/bin/orca
e2e=registry.k8s.io/e2e-test-images
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
test/conformance/images/busybox.sh "$bin"
# The aggregator spec's two programs, static as upstream's images (on a
# distroless base) have them: k8s.io/sample-apiserver's main package at the
# release the suite is built from, and etcd's server from the
# go.etcd.io/etcd/server/v3 this module resolves (images/etcd, what
# upstream's etcd main package is).
(
	cd test/conformance
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$bin/sample-apiserver" k8s.io/sample-apiserver
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$bin/etcd" ./images/etcd
)

# copy_bin SRC ROOT [DEST]: puts a program into ROOT with the shared
# libraries ldd names, at their own paths (the loader's default search).
copy_bin() {
	local src=$1 root=$2 dest=${3:-$1}
	install -D -m 0755 "$src" "$root$dest"
	ldd "$src" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
		[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
	done
}

# busybox_root ROOT: every applet of upstream's busybox (built by
# busybox.sh into BIN) linked in /bin, ash as /bin/sh, as in the suite's
# busybox image (tests call /bin/sysctl and the like, and read ash's
# messages).
busybox_root() {
	local root=$1
	mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" "$root/var/www" "$root/usr/bin" "$root/usr/sbin"
	chmod 1777 "$root/tmp"
	cp "$bin/busybox" "$root/bin/busybox"
	for a in $("$bin/busybox" --list); do
		[ "$a" = busybox ] || [ "$a" = linuxrc ] || ln -sf busybox "$root/bin/$a"
	done
	cat >"$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
	cat >"$root/etc/group" <<'G'
root:x:0:
nobody:x:65534:
G
	printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
}

# tools_root ROOT: busybox plus the networking programs agnhost's image
# (Alpine with bind-tools, curl, netcat-openbsd, iproute2, iperf, socat)
# and glibc-dns-testing (Debian with dnsutils) give the tests.
tools_root() {
	local root=$1
	busybox_root "$root"
	copy_bin /bin/bash "$root" /bin/bash
	for p in curl dig nslookup host socat ss ip iperf getent; do
		src=$(command -v "$p") || { echo "missing $p: apt-get install curl bind9-dnsutils socat iproute2 iperf" >&2; exit 1; }
		rm -f "$root/bin/$p" "$root/usr/bin/$p"
		copy_bin "$src" "$root" "/usr/bin/$p"
	done
	# Tests run `nc -v` and `nc -z`, which OpenBSD's netcat has and
	# busybox's applet reads otherwise.
	rm -f "$root/bin/nc"
	copy_bin "$(command -v nc.openbsd)" "$root" /usr/bin/nc
}

# static_root ROOT: what a static program's image needs around it, as
# upstream's distroless bases give: a writable /tmp, root and nobody in
# /etc/passwd and /etc/group, and nsswitch.conf for Go's resolver.
static_root() {
	local root=$1
	mkdir -p "$root/etc" "$root/tmp" "$root/root"
	chmod 1777 "$root/tmp"
	cat >"$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
P
	cat >"$root/etc/group" <<'G'
root:x:0:
nobody:x:65534:
G
	printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
}

pack() { "$orca" images pack "$@" >/dev/null; }

# busybox: the suite's general-purpose image.
busybox_root "$work/busybox"
pack "$work/busybox" --tag "$e2e/busybox:1.37.0-2" --output "$out/busybox.tar" --cmd sh

# nginx (two versions): busybox's httpd serves a static page on port 80,
# all the suite asks of nginx.
for v in 1.27.0-2 1.28.0-2; do
	root=$work/nginx-$v
	busybox_root "$root"
	mkdir -p "$root/usr/share/nginx/html"
	echo "<html><body><h1>Welcome to nginx!</h1><p>stand-in $v</p></body></html>" >"$root/usr/share/nginx/html/index.html"
	pack "$root" --tag "$e2e/nginx:$v" --output "$out/nginx-$v.tar" --expose 80/tcp \
		--cmd /bin/httpd --cmd -f --cmd -p --cmd 80 --cmd -h --cmd /usr/share/nginx/html
done

# agnhost (current and previous tag, distinct images as upstream's are).
porter=$(cd test/conformance && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images
for v in 2.66.1 2.55; do
	root=$work/agnhost-$v
	tools_root "$root"
	install -m 0755 "$bin/agnhost" "$root/agnhost"
	ln -s agnhost "$root/agnhost-2"
	install -m 0644 "$porter/agnhost/porter/localhost.crt" "$porter/agnhost/porter/localhost.key" "$root/"
	mkdir -p "$root/uploads"
	echo "$v" >"$root/VERSION"
	cat >>"$root/etc/passwd" <<'P'
user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh
P
	cat >>"$root/etc/group" <<'G'
user-defined-in-image:x:1000:user-defined-in-image
group-defined-in-image:x:50000:user-defined-in-image
G
	pack "$root" --tag "$e2e/agnhost:$v" --output "$out/agnhost-$v.tar" \
		--entrypoint /agnhost --cmd pause --expose 80/tcp --expose 8080/tcp --expose 8081/tcp --expose 9376/tcp --expose 5000/tcp
	# kitten and nautilus: agnhost's test-webserver over their own data.json.
	if [ "$v" = 2.66.1 ]; then
		for pic in kitten nautilus; do
			cp -a "$root" "$work/$pic"
			install -m 0644 "$porter/$pic/html/$pic.jpg" "$porter/$pic/html/data.json" "$work/$pic/"
			pack "$work/$pic" --tag "$e2e/$pic:1.8" --output "$out/$pic.tar" --entrypoint /agnhost --cmd test-webserver --expose 80/tcp
		done
	fi
done

# glibc-dns-testing: Debian's dig and getent for the DNS specs.
tools_root "$work/dnstest"
pack "$work/dnstest" --tag "$e2e/glibc-dns-testing:2.1.1" --output "$out/glibc-dns-testing.tar" --cmd /bin/sh

# nonewprivs: upstream's nnp program, setuid root, over busybox.
busybox_root "$work/nnp"
install -D -m 4755 "$bin/nnp" "$work/nnp/usr/local/bin/nnp"
pack "$work/nnp" --tag "$e2e/nonewprivs:1.4" --output "$out/nonewprivs.tar" --cmd nnp

# nonroot: busybox run as uid 1234.
busybox_root "$work/nonroot"
pack "$work/nonroot" --tag "$e2e/nonroot:1.5" --output "$out/nonroot.tar" --user 1234 --cmd sh

# sample-apiserver: upstream's sample API server at /sample-apiserver, its
# entrypoint (the aggregator spec passes only flags).
static_root "$work/sample-apiserver"
install -m 0755 "$bin/sample-apiserver" "$work/sample-apiserver/sample-apiserver"
pack "$work/sample-apiserver" --tag "$e2e/sample-apiserver:1.29.2" --output "$out/sample-apiserver.tar" \
	--entrypoint /sample-apiserver --expose 443/tcp

# etcd: etcd's server at /usr/local/bin/etcd, the command the aggregator
# spec runs; with no --data-dir it keeps default.etcd in the working
# directory, /var/lib/etcd.
static_root "$work/etcd"
install -D -m 0755 "$bin/etcd" "$work/etcd/usr/local/bin/etcd"
mkdir -p "$work/etcd/var/lib/etcd" "$work/etcd/var/etcd"
pack "$work/etcd" --tag registry.k8s.io/etcd:3.7.0-0 --output "$out/etcd.tar" --workdir /var/lib/etcd \
	--cmd /usr/local/bin/etcd --expose 2379/tcp --expose 2380/tcp

# pause: Orca's own pause program under the suite's name.
mkdir -p "$work/pause"
install -m 0755 "$(dirname "$orca")/orca-pause" "$work/pause/pause"
pack "$work/pause" --tag registry.k8s.io/pause:3.10.2 --output "$out/pause.tar" --entrypoint /pause

ls "$out"
