// Package simnode is a SIMULATION of many nodes in one process, used for
// scale trials and benchmarks of the control plane, never for real
// workloads: no container, sandbox or network is ever created.
//
// A Simulator registers N Nodes (realistic capacity, zone, region and
// instance-type labels, the node.orca.io/simulated=true label and a
// simulated:// container runtime), renews their Leases in
// kube-node-lease on the kubelet's schedule, spread over the period so
// that the API server sees an even load, and reports node status as a
// kubelet does (when it changes, otherwise every five minutes). A kubelet
// stand-in takes the pods bound to those nodes through their lifecycle:
// Running with an address from the node's podCIDR, Ready after the
// readiness probe's initial delay, Succeeded or Failed after a declared
// run time, and removed once their deletion grace period has passed.
//
// Pods steer the simulation with annotations:
//
//	sim.orca.io/run-duration: 30s   the containers exit after this long
//	sim.orca.io/exit-code: "1"      with this code (0 when absent)
//	sim.orca.io/stop-duration: 0s   containers stop this long after a
//	                                deletion, at most the grace period
//	                                (the whole grace period when absent)
//
// The decisions (what status a pod has now, when to look at it next,
// which address it gets, when each node's lease and status are due) are
// pure functions over plain data; the Simulator only feeds them from one
// shared pod informer and one workqueue and writes what they return.
package simnode
