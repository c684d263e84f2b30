#!/usr/bin/env bash
# Stops the cluster started by hack/up.sh. Its data stays for the next
# `make up`.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then data=${ORCA_DATA_DIR:-/var/lib/orca}; else data=${ORCA_DATA_DIR:-$HOME/.orca}; fi
pidfile=$data/server.pid
if [ ! -f "$pidfile" ] || ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	echo "no orca server running"
	rm -f "$pidfile"
	exit 0
fi
pid=$(cat "$pidfile")
kill "$pid"
for _ in $(seq 1 40); do
	kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; echo "orca server stopped"; exit 0; }
	sleep 0.25
done
echo "orca server did not stop in 10s; killing it" >&2
kill -9 "$pid" || true
rm -f "$pidfile"
