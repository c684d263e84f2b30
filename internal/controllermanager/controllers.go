package controllermanager

import (
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/orca-project/orca/internal/controller/attachdetach"
	"github.com/orca-project/orca/internal/controller/bootstrapsigner"
	"github.com/orca-project/orca/internal/controller/clusterroleaggregation"
	"github.com/orca-project/orca/internal/controller/cronjob"
	"github.com/orca-project/orca/internal/controller/csrapproving"
	"github.com/orca-project/orca/internal/controller/csrcleaner"
	"github.com/orca-project/orca/internal/controller/daemonset"
	"github.com/orca-project/orca/internal/controller/deployment"
	"github.com/orca-project/orca/internal/controller/endpoints"
	"github.com/orca-project/orca/internal/controller/endpointslice"
	"github.com/orca-project/orca/internal/controller/endpointslicemirroring"
	"github.com/orca-project/orca/internal/controller/ephemeral"
	"github.com/orca-project/orca/internal/controller/garbagecollector"
	"github.com/orca-project/orca/internal/controller/ingresspublish"
	"github.com/orca-project/orca/internal/controller/job"
	"github.com/orca-project/orca/internal/controller/localpath"
	"github.com/orca-project/orca/internal/controller/namespace"
	"github.com/orca-project/orca/internal/controller/persistentvolume"
	"github.com/orca-project/orca/internal/controller/podautoscaler"
	"github.com/orca-project/orca/internal/controller/pvcprotection"
	"github.com/orca-project/orca/internal/controller/pvprotection"
	"github.com/orca-project/orca/internal/controller/replicaset"
	"github.com/orca-project/orca/internal/controller/resourcequota"
	"github.com/orca-project/orca/internal/controller/serviceaccount"
	"github.com/orca-project/orca/internal/controller/servicecidrs"
	"github.com/orca-project/orca/internal/controller/statefulset"
	"github.com/orca-project/orca/internal/controller/tainteviction"
	"github.com/orca-project/orca/internal/controller/tokencleaner"
	"github.com/orca-project/orca/internal/controller/ttlafterfinished"
	"github.com/orca-project/orca/internal/controller/validatingadmissionpolicystatus"
	"github.com/orca-project/orca/internal/controller/volumeexpand"
)

// DefaultControllers are the controllers `orca server` and `orca
// controller-manager` run, with upstream's default worker counts.
func DefaultControllers() []Descriptor {
	return []Descriptor{
		// Upstream leaves these two to kubeadm to turn on; Orca's nodes join
		// with bootstrap tokens, so they run by default.
		{Name: "attachdetach", Workers: 2, New: func(c *Context) (Controller, error) {
			return attachdetach.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "bootstrapsigner", Workers: 1, New: func(c *Context) (Controller, error) {
			return bootstrapsigner.New(c.Client, c.QueueMetrics, c.Log)
		}},
		{Name: "tokencleaner", Workers: 1, New: func(c *Context) (Controller, error) {
			return tokencleaner.New(c.Client, c.QueueMetrics, c.Log)
		}},
		{Name: "clusterrole-aggregation", Workers: 5, New: func(c *Context) (Controller, error) {
			return clusterroleaggregation.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "csrapproving", Workers: 5, New: func(c *Context) (Controller, error) {
			return csrapproving.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "csrcleaner", Workers: 1, New: func(c *Context) (Controller, error) {
			return csrcleaner.New(c.Client, c.Informers, c.Log), nil
		}},
		{Name: "cronjob", Workers: 5, New: func(c *Context) (Controller, error) { return cronjob.New(c.Client, c.Informers, c.QueueMetrics, c.Log) }},
		{Name: "daemonset", Workers: 2, New: func(c *Context) (Controller, error) {
			return daemonset.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "deployment", Workers: 5, New: func(c *Context) (Controller, error) {
			return deployment.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "disruption", Workers: 1, New: newDisruption},
		{Name: "endpoint", Workers: 5, New: func(c *Context) (Controller, error) {
			return endpoints.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "endpointslice", Workers: 5, New: func(c *Context) (Controller, error) {
			return endpointslice.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "endpointslicemirroring", Workers: 5, New: func(c *Context) (Controller, error) {
			return endpointslicemirroring.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "garbagecollector", Workers: 20, New: func(c *Context) (Controller, error) {
			return garbagecollector.New(c.Metadata, c.Dynamic, c.Discovery, c.QueueMetrics, c.Log), nil
		}},
		{Name: "ingress-publisher", Workers: 1, New: func(c *Context) (Controller, error) {
			gw, err := gwclient.NewForConfig(c.REST)
			if err != nil {
				return nil, err
			}
			return ingresspublish.New(c.Client, gw, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "ephemeral-volume", Workers: 1, New: func(c *Context) (Controller, error) {
			return ephemeral.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "local-path-provisioner", Workers: 2, New: func(c *Context) (Controller, error) {
			return localpath.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "persistentvolume-binder", Workers: 1, New: func(c *Context) (Controller, error) {
			return persistentvolume.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "persistentvolume-expander", Workers: 1, New: func(c *Context) (Controller, error) {
			return volumeexpand.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "pv-protection", Workers: 1, New: func(c *Context) (Controller, error) {
			return pvprotection.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "pvc-protection", Workers: 1, New: func(c *Context) (Controller, error) {
			return pvcprotection.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: podautoscaler.Name, Workers: 5, New: func(c *Context) (Controller, error) {
			return podautoscaler.New(c.REST, c.Client, c.Discovery, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "job", Workers: 5, New: func(c *Context) (Controller, error) { return job.New(c.Client, c.Informers, c.QueueMetrics, c.Log) }},
		{Name: "namespace", Workers: 10, New: func(c *Context) (Controller, error) {
			return namespace.New(c.Client, c.Metadata, c.Discovery, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "podcertificaterequest-cleaner", Workers: 1, New: func(c *Context) (Controller, error) {
			return csrcleaner.NewPCR(c.Client, c.Informers, c.Log), nil
		}},
		{Name: "replicaset", Workers: 5, New: func(c *Context) (Controller, error) {
			return replicaset.NewReplicaSet(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "replicationcontroller", Workers: 5, New: func(c *Context) (Controller, error) {
			return replicaset.NewReplicationController(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "resourcequota", Workers: 5, New: func(c *Context) (Controller, error) {
			return resourcequota.New(c.Client, c.Informers, c.QueueMetrics, c.Log), nil
		}},
		{Name: "taint-eviction-controller", Workers: 8, New: func(c *Context) (Controller, error) {
			return tainteviction.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "statefulset", Workers: 5, New: func(c *Context) (Controller, error) {
			return statefulset.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "serviceaccount", Workers: 1, New: func(c *Context) (Controller, error) {
			return serviceaccount.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "service-cidr", Workers: 5, New: func(c *Context) (Controller, error) {
			return servicecidrs.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		{Name: "ttl-after-finished", Workers: 5, New: func(c *Context) (Controller, error) {
			return ttlafterfinished.New(c.Client, c.Informers, c.QueueMetrics, c.Log)
		}},
		// Upstream's validatingadmissionpolicy-status-controller; named
		// without the suffix so that ServiceAccountFor gives it upstream's
		// account, validatingadmissionpolicy-status-controller.
		{Name: "validatingadmissionpolicy-status", Workers: 5, New: func(c *Context) (Controller, error) {
			return validatingadmissionpolicystatus.New(c.Client, c.Discovery, c.Informers, c.QueueMetrics, c.Log)
		}},
	}
}
