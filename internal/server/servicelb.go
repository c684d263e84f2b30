package server

import (
	"github.com/orca-project/orca/internal/controller/servicelb"
	"github.com/orca-project/orca/internal/controllermanager"
)

// ServiceLB gives LoadBalancer Services their addresses: the Ready nodes'
// InternalIPs, or one each out of pool (a CIDR or FIRST-LAST) when set.
// It is registered here because it needs the pool.
func ServiceLB(pool string) controllermanager.Descriptor {
	return controllermanager.Descriptor{Name: "service-lb", Workers: 1, New: func(c *controllermanager.Context) (controllermanager.Controller, error) {
		return servicelb.New(c.Client, c.Informers, pool, c.QueueMetrics, c.Log)
	}}
}
