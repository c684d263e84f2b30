package crds

import "testing"

func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range all {
		names[c.Name] = true
		if c.Spec.Group != "gateway.networking.k8s.io" || c.Annotations[BundleVersionAnnotation] == "" {
			t.Errorf("%s: group %s, bundle version %q", c.Name, c.Spec.Group, c.Annotations[BundleVersionAnnotation])
		}
	}
	for _, want := range []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"} {
		if !names[want+".gateway.networking.k8s.io"] {
			t.Errorf("no CRD for %s", want)
		}
	}
}
