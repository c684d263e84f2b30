#!/usr/bin/env bash
# Starts a single-node Orca cluster in the background and waits until it
# answers. Data lives in ORCA_DATA_DIR (default /var/lib/orca as root,
# ~/.orca otherwise); logs go to DATA_DIR/server.log. As root the node agent
# runs in the same process (containerd, runc and the CNI plugins come from
# Debian's packages) and the project's busybox test image is imported, so
# pods run right away.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh

bin=$PWD/bin/orca
[ -x "$bin" ] || make build
if [ "$(id -u)" -eq 0 ]; then
	data=${ORCA_DATA_DIR:-/var/lib/orca}
	# Put orca on PATH so that `orca kubectl ...` works from anywhere.
	ln -sf "$bin" /usr/local/bin/orca
	flags=${ORCA_SERVER_FLAGS:-}
else
	data=${ORCA_DATA_DIR:-$HOME/.orca}
	# Containers need root: without it the control plane runs alone.
	flags="--disable-agent ${ORCA_SERVER_FLAGS:-}"
fi
mkdir -p "$data"
pidfile=$data/server.pid
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	echo "orca server already running (pid $(cat "$pidfile")); stop it with: make down"
	exit 0
fi
# import_test_image waits for the node's containerd and loads the busybox
# test image into it (nothing is pulled from a registry).
import_test_image() {
	for _ in $(seq 1 120); do
		if grep -q "agent running" "$data/server.log" 2>/dev/null; then
			"$bin" images build --output "$data/images" >/dev/null
			"$bin" images import --data-dir "$data" "$data/images/busybox.tar"
			return 0
		fi
		sleep 0.5
	done
	echo "the node agent did not start; see $data/server.log" >&2
	return 1
}

echo "starting orca server (data in $data, log in $data/server.log)"
nohup "$bin" server --data-dir "$data" $flags >"$data/server.log" 2>&1 &
echo $! >"$pidfile"
for _ in $(seq 1 120); do
	if grep -q "cluster is up" "$data/server.log" 2>/dev/null; then
		grep "^orca:" "$data/server.log"
		if [[ $flags != *--disable-agent* ]]; then
			import_test_image
		fi
		echo
		echo "Try: orca kubectl get nodes"
		echo "     orca kubectl run hello --image=localhost/orca/busybox:1.35 -- sh -c 'echo hello; sleep 3600'"
		exit 0
	fi
	if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
		echo "orca server exited; its log:" >&2
		cat "$data/server.log" >&2
		exit 1
	fi
	sleep 0.5
done
echo "orca server did not come up within 60s; see $data/server.log" >&2
exit 1
