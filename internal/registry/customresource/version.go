package customresource

import "k8s.io/apimachinery/pkg/version"

// compareVersions orders version names by Kubernetes' priority (v1 over
// v1beta1 over v1alpha1 over anything else).
func compareVersions(a, b string) int { return version.CompareKubeAwareVersionStrings(a, b) }
