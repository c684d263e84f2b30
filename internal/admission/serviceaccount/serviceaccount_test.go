package serviceaccount

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func TestAdmit(t *testing.T) {
	sa := func(name string, automount *bool) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, AutomountServiceAccountToken: automount,
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
	}
	pod := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init"}},
			Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
		}}
		if mut != nil {
			mut(p)
		}
		return p
	}
	cases := []struct {
		name      string
		accounts  []*corev1.ServiceAccount
		pod       *corev1.Pod
		wantErr   string
		wantSA    string
		wantMount bool
	}{
		{"default account and token", []*corev1.ServiceAccount{sa("default", nil)}, pod(nil), "", "default", true},
		{"named account", []*corev1.ServiceAccount{sa("builder", nil)}, pod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }), "", "builder", true},
		{"missing named account", nil, pod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "nope" }),
			`pods "p" is forbidden: error looking up service account ns/nope: serviceaccount "nope" not found`, "", false},
		{"missing default account", nil, pod(nil),
			`pods "p" is forbidden: error looking up service account ns/default: serviceaccount "default" not found`, "", false},
		{"pod turns automount off", []*corev1.ServiceAccount{sa("default", ptr.To(true))}, pod(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }), "", "default", false},
		{"account turns automount off", []*corev1.ServiceAccount{sa("default", ptr.To(false))}, pod(nil), "", "default", false},
		{"pod overrides account", []*corev1.ServiceAccount{sa("default", ptr.To(false))}, pod(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(true) }), "", "default", true},
		{"mirror pod untouched", nil, pod(func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorPodAnnotation: "x"} }), "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := admissiontest.New()
			for _, a := range tc.accounts {
				objs.Add(serviceAccountsGVR, a)
			}
			p := New(objs)
			attempts := 0
			p.retryInterval = func() time.Duration { attempts++; return time.Millisecond }
			a := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: tc.pod}
			err := p.Admit(context.Background(), a)
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("got %v, want 403 %q", err, tc.wantErr)
				}
				if tc.pod.Spec.ServiceAccountName == DefaultName && attempts != 9 {
					t.Fatalf("default account looked up %d+1 times, want 10", attempts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.pod.Spec.ServiceAccountName != tc.wantSA {
				t.Fatalf("serviceAccountName %q, want %q", tc.pod.Spec.ServiceAccountName, tc.wantSA)
			}
			if tc.wantSA == DefaultName && tc.pod.Spec.DeprecatedServiceAccount != DefaultName {
				t.Fatalf("defaulted account without its deprecated alias: serviceAccount %q", tc.pod.Spec.DeprecatedServiceAccount)
			}
			checkMount(t, tc.pod, tc.wantMount)
			if err := p.Validate(context.Background(), a); err != nil {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}

func checkMount(t *testing.T, pod *corev1.Pod, want bool) {
	t.Helper()
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if strings.HasPrefix(pod.Spec.Volumes[i].Name, VolumePrefix) {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if !want {
		if vol != nil {
			t.Fatalf("unexpected token volume %s", vol.Name)
		}
		return
	}
	if vol == nil || len(vol.Name) != len(VolumePrefix)+5 {
		t.Fatalf("no token volume: %+v", pod.Spec.Volumes)
	}
	src := vol.Projected
	if src == nil || len(src.Sources) != 3 || *src.DefaultMode != 0o644 ||
		*src.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 || src.Sources[0].ServiceAccountToken.Path != "token" ||
		src.Sources[1].ConfigMap.Name != "kube-root-ca.crt" || src.Sources[1].ConfigMap.Items[0].Key != "ca.crt" ||
		src.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
		t.Fatalf("token volume differs from upstream's: %+v", src)
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		n := 0
		for _, m := range c.VolumeMounts {
			if m.MountPath == MountPath && m.Name == vol.Name && m.ReadOnly {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("container %s mounts the token %d times", c.Name, n)
		}
	}
}

func TestExistingMountKept(t *testing.T) {
	objs := admissiontest.New().Add(serviceAccountsGVR, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		Volumes:    []corev1.Volume{{Name: "own"}},
		Containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "own", MountPath: MountPath}}}},
	}}
	if err := New(objs).Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Object: pod}); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 1 || len(pod.Spec.Containers[0].VolumeMounts) != 1 {
		t.Fatalf("a container with its own mount at the token path must be left alone: %+v", pod.Spec)
	}
}
