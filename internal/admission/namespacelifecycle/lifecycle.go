// Package namespacelifecycle is upstream's NamespaceLifecycle admission
// plugin: no new content in a namespace that is being deleted. The API
// server itself refuses writes into a namespace that does not exist and
// the deletion of default, kube-system and kube-public
// (internal/apiserver/deletion.go), the plugin's other two duties
// upstream.
package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/admission"
)

// PluginName is upstream's name for the plugin.
const PluginName = "NamespaceLifecycle"

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// exempt are namespaced resources a client creates to ask a question, not
// to store content, so they stay allowed in a terminating namespace.
var exempt = map[schema.GroupResource]bool{
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
}

// Plugin refuses creates in terminating namespaces.
type Plugin struct{ objects admission.Objects }

// New builds the plugin over the server's storage.
func New(objects admission.Objects) *Plugin { return &Plugin{objects: objects} }

func (*Plugin) Name() string { return PluginName }

// Admit runs in the mutating phase, as upstream's does, so that a request
// into a terminating namespace is refused before anything else looks at it.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Resource == namespacesGVR || a.Namespace == "" || exempt[a.Resource.GroupResource()] {
		return nil
	}
	obj, err := p.objects.Get(ctx, namespacesGVR, "", a.Namespace)
	if apierrors.IsNotFound(err) {
		return nil // the API server answers 404 for a missing namespace
	}
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("look up namespace %s: %w", a.Namespace, err))
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	ferr := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	if se, ok := ferr.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
	}
	return ferr
}
