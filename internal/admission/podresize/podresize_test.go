package podresize

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func TestValidate(t *testing.T) {
	node := func(name, os string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}
		return n
	}
	objects := admissiontest.New().Add(nodesGVR, node("linux-1", "linux")).Add(nodesGVR, node("win-1", "windows"))
	pod := func(nodeName, cpu, mem string, gen int64) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: gen},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			}}}},
		}
	}
	for _, tc := range []struct {
		name     string
		sub      string
		old, new *corev1.Pod
		want     string
		cause    metav1.CauseType
	}{
		{"fits", "resize", pod("linux-1", "1", "100Mi", 1), pod("linux-1", "2", "1Gi", 2), "", ""},
		{"cpu over allocatable", "resize", pod("linux-1", "1", "100Mi", 1), pod("linux-1", "3", "100Mi", 2),
			"node didn't have enough allocatable resources: cpu, requested: 3000, allocatable: 2000", ReasonNodeCapacity},
		{"both over", "resize", pod("linux-1", "1", "100Mi", 1), pod("linux-1", "3", "2Gi", 2),
			"cpu, requested: 3000, allocatable: 2000; memory, requested: 2147483648, allocatable: 1073741824", ReasonNodeCapacity},
		{"windows node", "resize", pod("win-1", "1", "100Mi", 1), pod("win-1", "1500m", "100Mi", 2),
			`pod resize is only supported on linux nodes, node "win-1" is "windows"`, ReasonUnsupportedPlatform},
		{"missing node", "resize", pod("gone", "1", "100Mi", 1), pod("gone", "1500m", "100Mi", 2), `node "gone" not found`, ""},
		{"not bound", "resize", pod("", "1", "100Mi", 1), pod("", "30", "100Mi", 2), "", ""},
		{"no spec change", "resize", pod("linux-1", "30", "100Mi", 2), pod("linux-1", "30", "100Mi", 2), "", ""},
		{"not the resize subresource", "", pod("linux-1", "1", "100Mi", 1), pod("linux-1", "30", "100Mi", 2), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(objects).Validate(context.Background(), &admission.Attributes{
				Operation: admission.Update, Resource: podsGVR, Subresource: tc.sub, Namespace: "ns", Name: "p",
				Object: tc.new, OldObject: tc.old,
			})
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want 403 with %q", err, tc.want)
			}
			var status *apierrors.StatusError
			if tc.cause != "" && (!errors.As(err, &status) || len(status.ErrStatus.Details.Causes) == 0 || status.ErrStatus.Details.Causes[0].Type != tc.cause) {
				t.Errorf("cause of %v, want %s", err, tc.cause)
			}
		})
	}
}
