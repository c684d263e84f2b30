package nodelifecycle

import v1 "k8s.io/api/core/v1"

// zoneState is a zone's health as upstream's node lifecycle controller
// judges it: it sets how fast the nodes of the zone are tainted for
// eviction.
type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

// excludeDisruptionLabel keeps a node out of the zone counts, upstream's
// label of that name.
const excludeDisruptionLabel = "node.kubernetes.io/exclude-disruption"

// zoneKey is upstream's key of a node's failure domain: region and zone
// labels (the GA ones, or the beta ones before them); "" for a node with
// neither, so that unlabelled nodes share one zone.
func zoneKey(node *v1.Node) string {
	region, zone := node.Labels[v1.LabelTopologyRegion], node.Labels[v1.LabelTopologyZone]
	if region == "" {
		region = node.Labels[v1.LabelFailureDomainBetaRegion]
	}
	if zone == "" {
		zone = node.Labels[v1.LabelFailureDomainBetaZone]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// computeZoneState is upstream's: a zone with no Ready node is fully
// disrupted; one with more than two nodes not Ready making up at least
// the unhealthy threshold of it is partially disrupted.
func computeZoneState(ready []*v1.NodeCondition, unhealthyThreshold float32) zoneState {
	readyNodes, notReady := 0, 0
	for _, c := range ready {
		if c != nil && c.Status == v1.ConditionTrue {
			readyNodes++
		} else {
			notReady++
		}
	}
	switch {
	case readyNodes == 0 && notReady > 0:
		return stateFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+readyNodes) >= unhealthyThreshold:
		return statePartialDisruption
	}
	return stateNormal
}

// zoneRate is how many nodes per second of a zone in state s, holding
// size nodes, are tainted for eviction: the normal rate when healthy and
// when fully disrupted (the zone is gone: move its pods), the secondary
// rate when partially disrupted in a large cluster, none in a small one.
func zoneRate(s zoneState, size int, c Config) float32 {
	if s == statePartialDisruption {
		if int32(size) > c.LargeClusterSizeThreshold {
			return c.SecondaryNodeEvictionRate
		}
		return 0
	}
	return c.NodeEvictionRate
}

// disruption is what handleDisruption decides for a pass.
type disruption int

const (
	// perZone: zones whose state changed get the rate of their new state.
	perZone disruption = iota
	// enterMaster: every zone is fully disrupted (the controller, not the
	// nodes, is likely cut off): evictions stop, and the NoExecute taints
	// come off every node.
	enterMaster
	// exitMaster: some node is Ready again after a master disruption:
	// every node gets a fresh grace period and every zone its rate.
	exitMaster
	// unchanged: still in master disruption.
	unchanged
)

// decideDisruption compares the zones' states before and after a pass, as
// upstream's handleDisruption; old holds every zone of cur (a zone new in
// this pass as stateInitial).
func decideDisruption(old, cur map[string]zoneState) disruption {
	allAre := true
	for _, s := range cur {
		if s != stateFullDisruption {
			allAre = false
		}
	}
	allWere := true
	for z, s := range old {
		if _, ok := cur[z]; !ok {
			continue
		}
		if s != stateFullDisruption {
			allWere = false
		}
	}
	switch {
	case allAre && allWere:
		return unchanged
	case allAre:
		return enterMaster
	case allWere:
		return exitMaster
	}
	return perZone
}
