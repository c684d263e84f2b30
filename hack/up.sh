#!/usr/bin/env bash
# Starts a single-node Orca cluster in the background and waits until it
# answers. Data lives in ORCA_DATA_DIR (default /var/lib/orca as root,
# ~/.orca otherwise); logs go to DATA_DIR/server.log.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh

bin=$PWD/bin/orca
[ -x "$bin" ] || make build
if [ "$(id -u)" -eq 0 ]; then
	data=${ORCA_DATA_DIR:-/var/lib/orca}
	# Put orca on PATH so that `orca kubectl ...` works from anywhere.
	ln -sf "$bin" /usr/local/bin/orca
else
	data=${ORCA_DATA_DIR:-$HOME/.orca}
fi
mkdir -p "$data"
pidfile=$data/server.pid
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	echo "orca server already running (pid $(cat "$pidfile")); stop it with: make down"
	exit 0
fi
echo "starting orca server (data in $data, log in $data/server.log)"
nohup "$bin" server --data-dir "$data" ${ORCA_SERVER_FLAGS:-} >"$data/server.log" 2>&1 &
echo $! >"$pidfile"
for _ in $(seq 1 120); do
	if grep -q "cluster is up" "$data/server.log" 2>/dev/null; then
		grep "^orca:" "$data/server.log"
		echo
		echo "Try: orca kubectl get ns"
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
