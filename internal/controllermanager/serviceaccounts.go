package controllermanager

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
)

// serviceAccounts names the kube-system service account each controller
// acts as when the manager uses service-account credentials: upstream's
// names, whose system:controller:NAME roles the bootstrap policy binds.
var serviceAccounts = map[string]string{
	"bootstrapsigner":         "bootstrap-signer",
	"clusterrole-aggregation": "clusterrole-aggregation-controller",
	"cronjob":                 "cronjob-controller",
	// Upstream's certificate controllers share one account.
	"csrapproving":              "certificate-controller",
	"csrcleaner":                "certificate-controller",
	"csrsigning":                "certificate-controller",
	"daemonset":                 "daemon-set-controller",
	"deployment":                "deployment-controller",
	"endpoint":                  "endpoint-controller",
	"endpointslice":             "endpointslice-controller",
	"endpointslicemirroring":    "endpointslicemirroring-controller",
	"garbagecollector":          "generic-garbage-collector",
	"horizontalpodautoscaling":  "horizontal-pod-autoscaler",
	"job":                       "job-controller",
	"local-path-provisioner":    "local-path-provisioner",
	"ephemeral-volume":          "ephemeral-volume-controller",
	"persistentvolume-binder":   "persistent-volume-binder",
	"persistentvolume-expander": "expand-controller",
	"pv-protection":             "pv-protection-controller",
	"pvc-protection":            "pvc-protection-controller",
	"namespace":                 "namespace-controller",
	"nodeipam":                  "node-controller",
	"node-lifecycle":            "node-controller",
	"pod-garbage-collector":     "pod-garbage-collector",
	// Upstream's taint eviction runs as the node controller.
	"taint-eviction-controller":     "node-controller",
	"podcertificaterequest-cleaner": "podcertificaterequestcleaner",
	"replicaset":                    "replicaset-controller",
	"replicationcontroller":         "replication-controller",
	"resourcequota":                 "resourcequota-controller",
	"root-ca-cert-publisher":        "root-ca-cert-publisher",
	"serviceaccount":                "service-account-controller",
	"service-cidr":                  "service-cidrs-controller",
	"servicelb":                     "service-lb-controller",
	"statefulset":                   "statefulset-controller",
	"tokencleaner":                  "token-cleaner",
	"ttl-after-finished":            "ttl-after-finished-controller",
}

// ServiceAccountFor is the service account a controller acts as.
func ServiceAccountFor(controller string) string {
	if sa, ok := serviceAccounts[controller]; ok {
		return sa
	}
	return controller + "-controller"
}

// credentials hands each controller clients that authenticate as its own
// service account, with tokens from the TokenRequest API that refresh
// before they expire (upstream's --use-service-account-credentials).
type credentials struct {
	builder clientbuilder.ControllerClientBuilder
}

func newCredentials(cfg *rest.Config, client kubernetes.Interface) *credentials {
	// The builder adds the bearer token; the manager's own certificate
	// must not travel with it.
	return &credentials{builder: clientbuilder.NewDynamicClientBuilder(rest.AnonymousClientConfig(cfg), client.CoreV1(), "kube-system")}
}

// contextFor is base with the clients of the controller's account.
func (c *credentials) contextFor(base Context, controller string) (*Context, error) {
	cfg, err := c.builder.Config(ServiceAccountFor(controller))
	if err != nil {
		return nil, fmt.Errorf("credentials of %s: %w", controller, err)
	}
	out := base
	out.REST = cfg
	if out.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if out.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if out.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	out.Discovery = discovery.NewDiscoveryClientForConfigOrDie(cfg)
	return &out, nil
}
