package podsecurity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

// validate runs the plugin and returns the warnings it gave the client
// and its error.
func validate(t *testing.T, p *Plugin, a *admission.Attributes) ([]string, error) {
	t.Helper()
	var warnings []string
	ctx := admission.WithWarnings(context.Background(), func(w string) { warnings = append(warnings, w) })
	err := p.Validate(ctx, a)
	return warnings, err
}

func TestPluginPods(t *testing.T) {
	objs := admissiontest.New().
		Add(namespacesGVR, namespace("ns", "enforce", "baseline", "warn", "restricted"))
	p := New(objs, mustChecker(t, nil))

	warnings, err := validate(t, p, podCreate(privilegedPod()))
	if !apierrors.IsForbidden(err) || err.Error() != `pods "x" is forbidden: violates PodSecurity "baseline:latest": `+privileged {
		t.Errorf("privileged pod: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("refused pod got warnings %q", warnings)
	}

	pod := privilegedPod()
	pod.Spec.Containers[0].SecurityContext = nil
	warnings, err = validate(t, p, podCreate(pod))
	want := []string{`would violate PodSecurity "restricted:latest": ` + escalation + ", " + capabilities + ", " + nonRoot + ", " + seccomp}
	if err != nil || !cmp.Equal(want, warnings) {
		t.Errorf("baseline pod: %v, warnings %q", err, warnings)
	}

	d := deployment(privilegedPod())
	warnings, err = validate(t, p, &admission.Attributes{Operation: admission.Create, Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), Namespace: "ns", Name: "d", Object: d})
	if err != nil || len(warnings) != 1 {
		t.Errorf("deployment: %v, warnings %q", err, warnings)
	}

	// Deletes and kinds without pods are none of the plugin's business.
	if _, err := validate(t, p, &admission.Attributes{Operation: admission.Delete, Resource: podsGVR, Namespace: "ns", Name: "x", OldObject: privilegedPod()}); err != nil {
		t.Errorf("delete: %v", err)
	}
	cm := &corev1.ConfigMap{}
	if _, err := validate(t, p, &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns", Object: cm}); err != nil {
		t.Errorf("configmap: %v", err)
	}
}

func TestPluginMissingNamespace(t *testing.T) {
	p := New(admissiontest.New(), mustChecker(t, nil))
	a := podCreate(privilegedPod())
	a.Namespace = "gone"
	_, err := validate(t, p, a)
	if !apierrors.IsInternalError(err) || err.Error() != `Internal error occurred: failed to lookup namespace "gone"` {
		t.Errorf("pod in a missing namespace: %v", err)
	}
	// A workload is never refused, even then.
	d := deployment(privilegedPod())
	d.Namespace = "gone"
	if _, err := validate(t, p, &admission.Attributes{Operation: admission.Create, Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), Namespace: "gone", Object: d}); err != nil {
		t.Errorf("deployment in a missing namespace: %v", err)
	}
	// Exempt users need no namespace.
	p = New(admissiontest.New(), mustChecker(t, config(t, exemptions)))
	a.UserName = "ci-bot"
	if _, err := validate(t, p, a); err != nil {
		t.Errorf("exempt user: %v", err)
	}
}

func TestPluginNamespaceUpdate(t *testing.T) {
	old := namespace("ns", "enforce", "baseline")
	objs := admissiontest.New().Add(namespacesGVR, old)
	bad := privilegedPod()
	bad.Spec.Containers[0].SecurityContext = nil
	bad.Name = "bad"
	objs.Add(podsGVR, bad)
	good := restrictedPod()
	good.Name = "good"
	objs.Add(podsGVR, good)
	p := New(objs, mustChecker(t, nil))

	next := namespace("ns", "enforce", "restricted")
	warnings, err := validate(t, p, &admission.Attributes{
		Operation: admission.Update, Resource: namespacesGVR, Kind: corev1.SchemeGroupVersion.WithKind("Namespace"),
		Name: "ns", Object: next, OldObject: old,
	})
	want := []string{
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
		`bad: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
	}
	if err != nil || !cmp.Equal(want, warnings) {
		t.Errorf("tightened namespace: %v\n%s", err, cmp.Diff(want, warnings))
	}
}
