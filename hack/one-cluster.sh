# Sourced by the scripts that start a cluster of their own on this
# machine's host networking (hack/conformance.sh,
# hack/gateway-conformance.sh): one cluster at a time. A `make up` server
# must be stopped first, and the end-to-end tests, which take the same
# lock, are waited for. The lock is held on descriptor 9 until the script
# exits.
if [ -f /var/lib/orca/server.pid ] && kill -0 "$(cat /var/lib/orca/server.pid)" 2>/dev/null; then
	echo "an orca server from make up is running; stop it with make down first" >&2
	exit 1
fi
exec 9>/run/orca-e2e.lock
flock -n 9 || { echo "waiting for the end-to-end tests to finish"; flock 9; }
