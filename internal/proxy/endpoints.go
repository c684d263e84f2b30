package proxy

// categorize picks the endpoints for traffic that may go anywhere in the
// cluster (cluster) and for traffic that must stay on this node (local),
// as upstream's CategorizeEndpoints: ready endpoints, or serving
// terminating ones when none is ready. local is nil unless a traffic
// policy is Local. PreferClose narrows cluster to this node's endpoints
// when any is ready here.
func categorize(s *ServicePort) (cluster, local []Endpoint) {
	cluster = usable(s.Endpoints, func(Endpoint) bool { return true })
	if s.PreferClose {
		if near := usable(s.Endpoints, func(e Endpoint) bool { return e.Near }); len(near) > 0 && near[0].Ready {
			cluster = near
		}
	}
	if s.ExternalLocal || s.InternalLocal {
		local = usable(s.Endpoints, func(e Endpoint) bool { return e.Local })
	}
	return cluster, local
}

// usable is the ready endpoints among those keep accepts, or the serving
// and terminating ones when none is ready.
func usable(eps []Endpoint, keep func(Endpoint) bool) []Endpoint {
	var ready, terminating []Endpoint
	for _, e := range eps {
		if !keep(e) {
			continue
		}
		switch {
		case e.Ready:
			ready = append(ready, e)
		case e.Serving && e.Terminating:
			terminating = append(terminating, e)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	return terminating
}
