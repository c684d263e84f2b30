// Package serverlb is a node's load balancer over the cluster's API
// servers, as k3s's agent load balancer: a TCP proxy on 127.0.0.1 that
// every client of the agent (the kubelet, the service proxy, the
// certificate managers) talks to instead of the one server named on the
// command line, so that a node outlives the server it joined through.
//
// It works at layer 4: TLS passes through untouched, and clients verify
// the API server's certificate (which names 127.0.0.1) against the
// cluster CA as before. It keeps one server while that server is healthy,
// so that long HTTP/2 connections and their watches stay together; a
// health check dials every server each HealthInterval, and a server that
// fails twice in a row, or that leaves the list, has every connection
// proxied to it closed at once, so that clients reconnect through the
// proxy to a live server within seconds rather than after TCP timeouts.
//
// Which server a new connection tries first is a pure function of the
// list, the servers' health and the current server (order.go); the LB
// around it only dials, copies bytes and closes.
//
// The list comes from the `kubernetes` Service's EndpointSlice, which the
// API servers keep equal to the set of live servers; the server given on
// the command line stays a last-resort fallback. A node's agent runs:
//
//	lb, err := serverlb.New(serverlb.Config{ListenAddr: "127.0.0.1:6444", Default: "10.0.0.1:6443"})
//	...
//	go lb.Run(ctx)
//	// join and build clients against lb.URL(), then:
//	go serverlb.WatchEndpoints(ctx, client, lb)
package serverlb
