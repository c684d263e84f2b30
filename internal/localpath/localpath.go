// Package localpath is what Orca's built-in local-path provisioner and
// the nodes that keep its volumes agree on: the provisioner's and the
// default class's names, where a node keeps the volumes, how a volume's
// directory is named, and the finalizer by which a node removes a
// deleted volume's directory before the PersistentVolume goes.
//
// A volume is a directory ROOT/<pv>_<namespace>_<claim> on one node,
// where ROOT is the agent's storage directory (DATA_DIR/storage), which
// the agent publishes in its Node's orca.io/local-path-dir annotation.
// The provisioner (a controller) only writes API objects; the node's
// agent makes and removes the directories (node.go).
package localpath

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// Provisioner is the provisioner name classes give to have volumes
	// made on the node a pod is scheduled to.
	Provisioner = "orca.io/local-path"
	// ClassName is the StorageClass the server creates, marked default.
	ClassName = "local-path"
	// DirAnnotation on a Node is the directory its agent keeps
	// local-path volumes in.
	DirAnnotation = "orca.io/local-path-dir"
	// NodeLabel on a PersistentVolume names the node that keeps it; the
	// node watches the volumes with its name there.
	NodeLabel = "orca.io/local-path-node"
	// Finalizer holds a deleted volume until its node has removed the
	// directory (or kept it, for the Retain policy).
	Finalizer = "orca.io/local-path-cleanup"
	// DirMode is a new volume directory's mode: writable by any user, as
	// k3s's local-path volumes, so that a pod running as a non-root user
	// without fsGroup can write; fsGroup narrows it per pod.
	DirMode = 0o777
)

// Class is the default StorageClass: volumes on the node the first
// consumer is scheduled to, deleted with their claims.
func Class() *storagev1.StorageClass {
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	del := v1.PersistentVolumeReclaimDelete
	expand := true
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "orca"},
		},
		Provisioner:          Provisioner,
		ReclaimPolicy:        &del,
		VolumeBindingMode:    &wait,
		AllowVolumeExpansion: &expand,
	}
}

// DirName is the directory of a volume below the storage root, as
// k3s's provisioner names it.
func DirName(pv, namespace, claim string) (string, error) {
	name := pv + "_" + namespace + "_" + claim
	if err := oneElement(name); err != nil {
		return "", err
	}
	return name, nil
}

// Within reports whether path names a directory directly below root,
// and which; anything else (root itself, a deeper path, a path climbing
// out with "..") is refused, so that no volume, however its name was
// crafted, reaches outside the node's storage directory.
func Within(root, path string) (string, error) {
	if !filepath.IsAbs(root) || !filepath.IsAbs(path) {
		return "", fmt.Errorf("volume path %q is not absolute below %q", path, root)
	}
	root = filepath.Clean(root)
	if filepath.Clean(path) != path {
		return "", fmt.Errorf("volume path %q is not clean", path)
	}
	dir, name := filepath.Split(path)
	if filepath.Clean(dir) != root {
		return "", fmt.Errorf("volume path %q is not directly below the storage directory %q", path, root)
	}
	if err := oneElement(name); err != nil {
		return "", err
	}
	return name, nil
}

func oneElement(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid volume directory name %q", name)
	}
	return nil
}

// Ours reports whether the volume was made by the local-path
// provisioner.
func Ours(pv *v1.PersistentVolume) bool {
	return pv.Annotations["pv.kubernetes.io/provisioned-by"] == Provisioner
}
