// Package node defines node.k8s.io/v1 (runtime classes): names, defaults,
// validation and table columns. What a class does to the pods naming it
// is the RuntimeClass admission plugin's (internal/admission/runtimeclass)
// and the kubelet's, which runs their sandboxes with its handler.
package node
