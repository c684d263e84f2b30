#!/usr/bin/env bash
# Adds or removes an extra node on this machine, as kind does with
# containers: the node is a network namespace on a shared bridge
# (orca-nodes, 172.30.0.0/24) running its own `orca agent` and containerd,
# joined to the cluster `make up` started. Root only.
#
#   hack/node.sh add NAME    start node NAME (ORCA_AGENT_FLAGS: more agent flags)
#   hack/node.sh del NAME    stop it and remove its namespace and data
#   hack/node.sh ls          list the extra nodes
#   hack/node.sh bridge      create the bridge only and print the host's
#                            address on it (for a server whose own node
#                            the extra nodes must route to)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "extra nodes need root" >&2; exit 1; }
data=${ORCA_DATA_DIR:-/var/lib/orca}
bin=$PWD/bin/orca
bridge=orca-nodes
hostip=172.30.0.1

cmd=${1:-}
name=${2:-}
make_bridge() {
	if ! ip link show "$bridge" >/dev/null 2>&1; then
		ip link add "$bridge" type bridge
		ip addr add "$hostip/24" dev "$bridge"
		ip link set "$bridge" up
		sysctl -qw net.ipv4.ip_forward=1
		# The bridge is the switch between the nodes' machines: its frames
		# must not pass this machine's netfilter, where the server's own
		# service proxy would take the traffic of the other nodes' load
		# balancer addresses. Pod bridges carry their own
		# nf_call_iptables flag.
		modprobe br_netfilter 2>/dev/null || true
		sysctl -qw net.bridge.bridge-nf-call-iptables=0 || true
	fi
}

case "$cmd" in
ls)
	ls "$data/nodes" 2>/dev/null || true
	exit 0
	;;
bridge)
	make_bridge
	echo "$hostip"
	exit 0
	;;
add | del) [ -n "$name" ] || { echo "usage: $0 $cmd NAME" >&2; exit 2; } ;;
*)
	echo "usage: $0 add|del NAME, or $0 ls|bridge" >&2
	exit 2
	;;
esac
dir=$data/nodes/$name
netns=orca-$name

if [ "$cmd" = del ]; then
	if [ -f "$dir/agent.pid" ]; then
		kill "$(cat "$dir/agent.pid")" 2>/dev/null || true
		sleep 2
	fi
	# The node's containerd and its pods outlive the agent by design.
	[ -d "$dir" ] && hack/killall.sh "$dir" >/dev/null
	"$bin" kubectl delete node "$name" --ignore-not-found >/dev/null 2>&1 || true
	ip netns del "$netns" 2>/dev/null || true
	ip link del "v-$name" 2>/dev/null || true
	rm -rf "$dir"
	echo "node $name removed"
	exit 0
fi

[ -f "$data/kubeconfig" ] || { echo "no cluster in $data: run make up first" >&2; exit 1; }
[ -d "$dir" ] && { echo "node $name exists; remove it with: $0 del $name" >&2; exit 1; }
make_bridge
# The next free address on the bridge.
used=$(
	ip -4 -o addr show 2>/dev/null | awk '{print $4}' || true
	for n in $(ls /run/netns 2>/dev/null); do ip -n "$n" -4 -o addr show 2>/dev/null | awk '{print $4}' || true; done
)
for i in $(seq 2 254); do
	grep -q "^172\.30\.0\.$i/" <<<"$used" || { ip=172.30.0.$i; break; }
done
mkdir -p "$dir"
ip netns add "$netns"
ip link add "v-$name" type veth peer name "v-$name-p"
ip link set "v-$name" master "$bridge" up
ip link set "v-$name-p" netns "$netns"
ip -n "$netns" link set "v-$name-p" name eth0
ip -n "$netns" addr add "$ip/24" dev eth0
ip -n "$netns" link set eth0 up
ip -n "$netns" link set lo up
ip -n "$netns" route add default via "$hostip"

# The node's kubeconfig reaches the API server over the bridge; the
# serving certificate names localhost, which TLS keeps checking.
port=$(sed -n 's#.*server: https://[^:]*:\([0-9]*\).*#\1#p' "$data/kubeconfig" | head -1)
sed "s#server: https://.*#server: https://$hostip:$port\n    tls-server-name: localhost#" "$data/kubeconfig" >"$dir/kubeconfig"
chmod 600 "$dir/kubeconfig"

# nsenter changes only the network namespace (ip netns exec would remount
# /sys and hide the cgroup file systems).
nohup nsenter --net="/run/netns/$netns" "$bin" agent --kubeconfig "$dir/kubeconfig" \
	--data-dir "$dir" --node-name "$name" --node-ip "$ip" ${ORCA_AGENT_FLAGS:-} >"$dir/agent.log" 2>&1 &
echo $! >"$dir/agent.pid"
for _ in $(seq 1 120); do
	if grep -q "agent running" "$dir/agent.log" 2>/dev/null; then
		[ -f "$data/images/busybox.tar" ] || "$bin" images build --output "$data/images" >/dev/null
		"$bin" images import --data-dir "$dir" "$data/images/busybox.tar" >/dev/null
		echo "node $name is up at $ip (log: $dir/agent.log)"
		exit 0
	fi
	kill -0 "$(cat "$dir/agent.pid")" 2>/dev/null || { cat "$dir/agent.log" >&2; exit 1; }
	sleep 0.5
done
echo "node $name did not start; see $dir/agent.log" >&2
exit 1
