#!/usr/bin/env bash
# Installs what Orca's build and a node need and a fresh machine may lack;
# with --tests also what only the test suite needs (a browser, Node.js).
# Idempotent: it installs nothing that is already there.
set -euo pipefail
tests=false
[ "${1:-}" = --tests ] && tests=true

need=()
command -v git >/dev/null || need+=(git)
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
# The node agent's runtime: containerd with runc, the CNI plugins, and
# busybox-static for the test image.
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx httpd || need+=(busybox-static)
command -v nft >/dev/null || [ -x /usr/sbin/nft ] || need+=(nftables)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || need+=(iproute2)
if $tests; then
	# The web console's browser tests drive Debian's Chromium headless;
	# nothing downloads a browser of its own. Node.js runs the tests of the
	# console's scripts.
	[ -x /usr/bin/chromium ] || need+=(chromium)
	command -v node >/dev/null || need+=(nodejs)
fi

if ((${#need[@]})); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: ${need[*]} (run as root to install them)" >&2
		exit 1
	fi
	echo "installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
	export PATH=$PATH:/usr/local/go/bin
fi
command -v go >/dev/null || { echo "Go is required (https://go.dev/dl/)" >&2; exit 1; }
