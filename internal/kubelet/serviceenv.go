package kubelet

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// serviceEnv is what upstream's kubelet puts into every container about
// services, Docker-link style: FOO_SERVICE_HOST, FOO_SERVICE_PORT,
// FOO_SERVICE_PORT_<NAME>, FOO_PORT and FOO_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR].
// The `kubernetes` service in default is always there (client-go's
// in-cluster configuration reads KUBERNETES_SERVICE_HOST and _PORT); the
// other services of the pod's namespace only with enableServiceLinks.
// Services without a cluster IP (headless, ExternalName) give nothing.
func serviceEnv(services []*v1.Service, ns string, links bool) map[string]string {
	chosen := map[string]*v1.Service{}
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == v1.ClusterIPNone || len(s.Spec.Ports) == 0 {
			continue
		}
		switch {
		case s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes":
			// As upstream, a namesake in the pod's own namespace wins.
			if _, taken := chosen[s.Name]; !taken {
				chosen[s.Name] = s
			}
		case s.Namespace == ns && links:
			chosen[s.Name] = s
		}
	}
	env := map[string]string{}
	for _, s := range chosen {
		prefix := envName(s.Name)
		env[prefix+"_SERVICE_HOST"] = s.Spec.ClusterIP
		env[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
		for i, p := range s.Spec.Ports {
			if p.Name != "" {
				env[prefix+"_SERVICE_PORT_"+envName(p.Name)] = strconv.Itoa(int(p.Port))
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			url := fmt.Sprintf("%s://%s", proto, net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(p.Port))))
			if i == 0 {
				env[prefix+"_PORT"] = url
			}
			pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
			env[pp] = url
			env[pp+"_PROTO"] = proto
			env[pp+"_PORT"] = strconv.Itoa(int(p.Port))
			env[pp+"_ADDR"] = s.Spec.ClusterIP
		}
	}
	return env
}

// envName is upstream's makeEnvVariableName: upper case, dashes to
// underscores.
func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// withServiceEnv appends the service variables a container did not
// declare itself, in name order, after the declared ones.
func withServiceEnv(declared []envVar, svc map[string]string) []envVar {
	have := make(map[string]bool, len(declared))
	for _, e := range declared {
		have[e.name] = true
	}
	names := make([]string, 0, len(svc))
	for n := range svc {
		if !have[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		declared = append(declared, envVar{n, svc[n]})
	}
	return declared
}

// serviceEnvOf is serviceEnv over the kubelet's cache of services.
func (k *Kubelet) serviceEnvOf(pod *v1.Pod) map[string]string {
	svcs, err := k.services.List(labels.Everything())
	if err != nil {
		k.log.Warn("list services for environment variables", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	return serviceEnv(svcs, pod.Namespace, links)
}
