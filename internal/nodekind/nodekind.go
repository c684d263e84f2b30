// Package nodekind tells simulated nodes (orca agent --simulate) from
// real ones. A simulated node has an address nothing listens on, so the
// parts of the cluster that dial nodes (the API server's kubelet proxy,
// the resource metrics scraper, the agents' pod routes) leave it alone
// instead of sending packets to an address outside the machine.
package nodekind

import v1 "k8s.io/api/core/v1"

// SimulatedLabel marks every simulated Node ("true").
const SimulatedLabel = "node.orca.io/simulated"

// Simulated reports whether n is a simulated node.
func Simulated(n *v1.Node) bool { return n.Labels[SimulatedLabel] == "true" }
