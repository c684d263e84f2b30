#!/usr/bin/env bash
# Stops everything an Orca data directory runs, which `make down` leaves
# for the next start to adopt: the node's containerd, its shims and the
# pods' processes under them, then unmounts what they left mounted under
# the directory (volumes, rootfs snapshots) and removes pod network
# namespaces nothing uses any more. The server (if any) is stopped first,
# with the agents and any helper whose pid file lies in the directory.
# The data itself stays unless --purge is given.
#
# `orca killall` does the same from the binary and also removes the node's
# network state (bridge, orca-svc, tables, routes) in the network namespace
# it runs in. This script leaves the network alone, because hack/node.sh
# runs it from the machine's namespace for nodes whose network lives in
# namespaces of their own.
#
#   hack/killall.sh [--purge] [DATA_DIR]   (default: ORCA_DATA_DIR or /var/lib/orca)
set -euo pipefail
cd "$(dirname "$0")/.."
purge=
if [ "${1:-}" = --purge ]; then purge=1; shift; fi
data=${1:-${ORCA_DATA_DIR:-/var/lib/orca}}
data=$(readlink -f "$data" 2>/dev/null || echo "$data")
[ "$(id -u)" -eq 0 ] || { echo "killall needs root" >&2; exit 1; }
[ -d "$data" ] || { echo "no such data directory: $data" >&2; exit 0; }

ORCA_DATA_DIR=$data hack/down.sh >/dev/null || true
for n in "$data"/nodes/*/agent.pid; do
	[ -f "$n" ] && kill "$(cat "$n")" 2>/dev/null || true
done
# Helpers' pid files go once used, so that a stale one never names a
# process that later took the same number.
for n in "$data"/*.pid; do
	[ -f "$n" ] && kill "$(cat "$n")" 2>/dev/null || true
	rm -f "$n"
done

# Processes started from the directory: the containerd of each node (its
# --config lies in it) and the shims (their -address does).
owners=()
for p in /proc/[0-9]*; do
	cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
	case "$cmd" in *"$data/"*) owners+=("${p#/proc/}") ;; esac
done
# Every descendant of those, found from the parent links.
declare -A parent=()
for p in /proc/[0-9]*; do
	# The command may hold spaces: the parent is the 2nd field after ")".
	line=$(cat "$p/stat" 2>/dev/null) || continue
	rest=${line##*) }
	set -- $rest
	parent[${p#/proc/}]=$2
done
victims=("${owners[@]}")
changed=1
while ((changed)); do
	changed=0
	for pid in "${!parent[@]}"; do
		[[ " ${victims[*]} " == *" $pid "* ]] && continue
		[[ " ${victims[*]} " == *" ${parent[$pid]} "* ]] && { victims+=("$pid"); changed=1; }
	done
done
if ((${#victims[@]})); then
	kill -9 "${victims[@]}" 2>/dev/null || true
	sleep 0.5
fi

# Mounts under the directory, deepest first.
awk -v d="$data/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
	umount -l "$m" 2>/dev/null || true
done
# Pod network namespaces whose processes are gone.
for ns in $(ls /run/netns 2>/dev/null | grep '^cni-' || true); do
	[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && ip netns del "$ns" 2>/dev/null || true
done
echo "stopped ${#victims[@]} processes of $data"
if [ -n "$purge" ]; then
	rm -rf "$data"
	echo "removed $data"
fi
