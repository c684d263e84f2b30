package credentials

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SecretGetter reads one secret.
type SecretGetter func(ctx context.Context, namespace, name string) (*v1.Secret, error)

// ForPod builds the keyring of the pod's imagePullSecrets. The names it
// could not read come back for the kubelet's warning; the pull goes on
// without them, as upstream's.
func ForPod(ctx context.Context, get SecretGetter, pod *v1.Pod) (*Keyring, []string) {
	var secrets []*v1.Secret
	var missing []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := get(ctx, pod.Namespace, ref.Name)
		if err != nil {
			missing = append(missing, ref.Name)
			continue
		}
		secrets = append(secrets, s)
	}
	return FromSecrets(secrets), missing
}

// Puller is the runtime's image service, as far as pulling goes.
type Puller interface {
	PullImage(ctx context.Context, in *runtimeapi.PullImageRequest, opts ...grpc.CallOption) (*runtimeapi.PullImageResponse, error)
}

// Pull pulls the image with each credential in turn until one is
// accepted, anonymously when there are none, and returns the runtime's
// reference to it. When every credential fails, the errors are joined.
func Pull(ctx context.Context, rt Puller, image string, auths []*runtimeapi.AuthConfig) (string, error) {
	spec := &runtimeapi.ImageSpec{Image: image}
	if len(auths) == 0 {
		resp, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec})
		if err != nil {
			return "", err
		}
		return resp.ImageRef, nil
	}
	var errs []error
	for _, a := range auths {
		resp, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, Auth: a})
		if err == nil {
			return resp.ImageRef, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}
