// Package defaulttolerationseconds is upstream's DefaultTolerationSeconds
// admission plugin: pods tolerate a node that is not ready or unreachable
// for five minutes before they are evicted from it, unless they say
// otherwise.
package defaulttolerationseconds

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "DefaultTolerationSeconds"

// DefaultSeconds is upstream's default for both taints.
const DefaultSeconds int64 = 300

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// Plugin adds the two tolerations.
type Plugin struct{}

// New builds the plugin.
func New() *Plugin { return &Plugin{} }

func (*Plugin) Name() string { return PluginName }

func (*Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Resource != podsGVR || a.Subresource != "" || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		// An empty key tolerates every taint, an empty effect every effect.
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && noExecute {
			notReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && noExecute {
			unreachable = true
		}
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable))
	}
	return nil
}

func toleration(key string) corev1.Toleration {
	s := DefaultSeconds
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s}
}
