package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateConfigMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		cm   corev1.ConfigMap
		want []string
	}{
		{"valid", corev1.ConfigMap{Data: map[string]string{"app.properties": "a=b", "KEY_1": "v"}, BinaryData: map[string][]byte{"logo.png": {1}}}, nil},
		{"empty", corev1.ConfigMap{}, nil},
		{"bad keys", corev1.ConfigMap{Data: map[string]string{"a/b": "x"}, BinaryData: map[string][]byte{"..": nil}},
			[]string{"binaryData[..]: Invalid value", "data[a/b]: Invalid value"}},
		{"key in both", corev1.ConfigMap{Data: map[string]string{"k": "x"}, BinaryData: map[string][]byte{"k": {1}}},
			[]string{"data[k]: Invalid value"}},
		{"too big", corev1.ConfigMap{Data: map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize), "b": "y"}},
			// Upstream's path for "the whole object" prints as [].
			[]string{"[]: Too long"}},
		{"at the limit", corev1.ConfigMap{Data: map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize-1), "b": "y"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := tc.cm
			expectErrs(t, runCreate(Configmaps, &cm), tc.want...)
		})
	}
	cm := &corev1.ConfigMap{Data: map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize+1)}}
	expectDetail(t, runCreate(Configmaps, cm), "[]", "may not be more than 1048576 bytes")
}

func TestValidateConfigMapUpdate(t *testing.T) {
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}, Data: map[string]string{"a": "1"}}
	upd := old.DeepCopy()
	upd.Data["a"] = "2"
	expectErrs(t, runUpdate(Configmaps, upd, old))

	frozen := old.DeepCopy()
	frozen.Immutable = ptrTo(true)
	upd = frozen.DeepCopy()
	upd.Data["a"] = "2"
	upd.BinaryData = map[string][]byte{"b": {1}}
	upd.Labels = map[string]string{"metadata": "may-change"}
	errs := runUpdate(Configmaps, upd, frozen)
	expectErrs(t, errs, "binaryData: Forbidden", "data: Forbidden")
	expectDetail(t, errs, "data", "field is immutable when `immutable` is set")

	upd = frozen.DeepCopy()
	upd.Immutable = ptrTo(false)
	expectErrs(t, runUpdate(Configmaps, upd, frozen), "immutable: Forbidden")

	// Only metadata changes: allowed.
	upd = frozen.DeepCopy()
	upd.Annotations = map[string]string{"a": "b"}
	expectErrs(t, runUpdate(Configmaps, upd, frozen))
}

func TestValidateSecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    corev1.Secret
		want []string
	}{
		{"opaque", corev1.Secret{Data: map[string][]byte{"password": []byte("x")}}, nil},
		{"stringData counts", corev1.Secret{StringData: map[string]string{"bad/key": "x"}}, []string{"data[bad/key]: Invalid value"}},
		{"too big", corev1.Secret{Data: map[string][]byte{"a": make([]byte, corev1.MaxSecretSize+1)}}, []string{"data: Too long"}},
		{"tls", corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}, nil},
		{"tls missing keys", corev1.Secret{Type: corev1.SecretTypeTLS},
			[]string{"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
		{"dockerconfigjson", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}}, nil},
		{"dockerconfigjson missing", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson},
			[]string{"data[.dockerconfigjson]: Required value"}},
		{"dockerconfigjson not json", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{`)}},
			[]string{"data[.dockerconfigjson]: Invalid value"}},
		{"service account token", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/service-account.name": "default"}},
			Type: corev1.SecretTypeServiceAccountToken}, nil},
		{"service account token without account", corev1.Secret{Type: corev1.SecretTypeServiceAccountToken},
			[]string{"metadata.annotations[kubernetes.io/service-account.name]: Required value"}},
		{"basic auth", corev1.Secret{Type: corev1.SecretTypeBasicAuth},
			[]string{"data[password]: Required value", "data[username]: Required value"}},
		{"ssh auth", corev1.Secret{Type: corev1.SecretTypeSSHAuth}, []string{"data[ssh-privatekey]: Required value"}},
		{"custom type", corev1.Secret{Type: "example.com/custom"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			expectErrs(t, runCreate(Secrets, &s), tc.want...)
		})
	}
}

func TestValidateSecretUpdate(t *testing.T) {
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "1"}, Data: map[string][]byte{"a": []byte("1")}}
	Secrets.Default(old)

	upd := old.DeepCopy()
	upd.Data["a"] = []byte("2")
	expectErrs(t, runUpdate(Secrets, upd, old))

	upd = old.DeepCopy()
	upd.Type = corev1.SecretTypeTLS
	upd.Data = map[string][]byte{"tls.crt": nil, "tls.key": nil}
	errs := runUpdate(Secrets, upd, old)
	expectErrs(t, errs, "type: Invalid value")
	expectDetail(t, errs, "type", "field is immutable")

	// Leaving the type out means the default, which is what it was.
	upd = old.DeepCopy()
	upd.Type = ""
	expectErrs(t, runUpdate(Secrets, upd, old))

	frozen := old.DeepCopy()
	frozen.Immutable = ptrTo(true)
	upd = frozen.DeepCopy()
	upd.StringData = map[string]string{"a": "changed"}
	expectErrs(t, runUpdate(Secrets, upd, frozen), "data: Forbidden")
}

func TestValidateNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	expectErrs(t, runCreate(Namespaces, ns))

	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: corev1.NamespaceSpec{
		Finalizers: []corev1.FinalizerName{"example.com/cleanup", "custom", "kubernetes"}}}
	expectErrs(t, runCreate(Namespaces, ns), "spec.finalizers: Invalid value")

	for name, ok := range map[string]bool{"team-a": true, "a.b": false, "Team": false, strings.Repeat("a", 64): false} {
		if got := len(Namespaces.ValidateName(name, false)) == 0; got != ok {
			t.Errorf("namespace name %q valid = %v, want %v", name, got, ok)
		}
	}
}

func TestValidateEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   corev1.Event
		want []string
	}{
		{"pod event", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}}, nil},
		{"node event in default", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "n.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "n"}}, nil},
		{"namespace mismatch", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "web"}},
			[]string{"involvedObject.namespace: Invalid value"}},
		{"cluster object elsewhere", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "n.1", Namespace: "team"},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "n"}},
			[]string{"involvedObject.namespace: Invalid value"}},
		{"new-style event", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
			EventTime:      metav1.NowMicro(), ReportingController: "example.com/ctl", ReportingInstance: "ctl-1", Action: "Scale", Reason: "Scaled"}, nil},
		{"new-style event missing fields", corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, EventTime: metav1.NowMicro()},
			// As upstream, an empty controller is also not a qualified name.
			[]string{"action: Required value", "reason: Required value", "reportingController: Invalid value", "reportingController: Invalid value",
				"reportingController: Required value", "reportingInstance: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			expectErrs(t, runCreate(Events, &ev), tc.want...)
		})
	}
	if errs := Events.ValidateName("web-7d9f.17a3b5c2d1e0f", false); len(errs) != 0 {
		t.Errorf("event name rejected: %v", errs)
	}
	if errs := Events.ValidateName("a/b", false); len(errs) == 0 {
		t.Errorf("event name with a slash accepted")
	}
}

func TestValidateEndpoints(t *testing.T) {
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
		Addresses:         []corev1.EndpointAddress{{IP: "10.244.0.5", Hostname: "web-0", NodeName: ptrTo("node-1")}},
		NotReadyAddresses: []corev1.EndpointAddress{{IP: "fd00::5"}},
		Ports:             []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
	}}}
	expectErrs(t, runCreate(Endpoints, ep))

	bad := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{
		{},
		{
			Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}, {IP: "not-an-ip"}},
			Ports:     []corev1.EndpointPort{{Port: 80}, {Name: "b", Port: 0, Protocol: "ICMP"}},
		},
	}}
	expectErrs(t, runCreate(Endpoints, bad),
		"subsets[0]: Required value",
		"subsets[1].addresses[0].ip: Invalid value",
		"subsets[1].addresses[1].ip: Invalid value",
		"subsets[1].addresses[1].ip: Invalid value",
		"subsets[1].ports[0].name: Required value",
		"subsets[1].ports[1].port: Invalid value",
		"subsets[1].ports[1].protocol: Unsupported value",
	)
}
