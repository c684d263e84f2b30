package server

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/auth/pki"
	"github.com/orca-project/orca/internal/localpath"
)

// ensureStorageClass creates the local-path StorageClass, the cluster's
// default, when it is missing, as k3s creates its own. One that exists
// is left as it is: an administrator may have made another the default.
func ensureStorageClass(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int) error {
	client, err := adminClient(opts, tlsDir, ca, port, "orca-storage-class", 5, 10)
	if err != nil {
		return err
	}
	return retryFor(ctx, 200*time.Millisecond, "StorageClass "+localpath.ClassName, func() error {
		_, err := client.StorageV1().StorageClasses().Create(ctx, localpath.Class(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}
