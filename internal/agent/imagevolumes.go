package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri"
	"github.com/orca-project/orca/internal/kubelet/credentials"
	"github.com/orca-project/orca/internal/kubelet/imagemount"
)

// imageVolumes pulls the images of image volumes through the CRI, as the
// kubelet pulls container images (with the pod's pull secrets and the same
// events), and mounts them through containerd's own API.
type imageVolumes struct {
	rt       imageService
	client   kubernetes.Interface
	mounter  *imagemount.Mounter
	recorder record.EventRecorder
}

// imageService is the part of the CRI that image volumes use.
type imageService interface {
	credentials.Puller
	ImageStatus(ctx context.Context, in *runtimeapi.ImageStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error)
}

func newImageVolumes(rt *cri.Client, client kubernetes.Interface, recorder record.EventRecorder) *imageVolumes {
	return &imageVolumes{
		rt:       rt,
		client:   client,
		mounter:  &imagemount.Mounter{Conn: rt.Conn(), Namespace: "k8s.io", Snapshotter: "overlayfs"},
		recorder: recorder,
	}
}

func (iv *imageVolumes) MountImage(ctx context.Context, pod *v1.Pod, src *v1.ImageVolumeSource, target string) error {
	ref, err := iv.ensure(ctx, pod, src)
	if err != nil {
		return err
	}
	return iv.mounter.Mount(ctx, ref, target)
}

func (iv *imageVolumes) UnmountImage(ctx context.Context, target string) error {
	return iv.mounter.Unmount(ctx, target)
}

// ensure makes the image present as its pull policy says and returns the
// runtime's ID for it.
func (iv *imageVolumes) ensure(ctx context.Context, pod *v1.Pod, src *v1.ImageVolumeSource) (string, error) {
	spec := &runtimeapi.ImageSpec{Image: src.Reference}
	st, err := iv.rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	present := err == nil && st.Image != nil
	policy := src.PullPolicy
	if policy == "" {
		policy = v1.PullIfNotPresent
	}
	if present && policy != v1.PullAlways {
		iv.recorder.Eventf(pod, v1.EventTypeNormal, "Pulled", "Image %q already present on machine", src.Reference)
		return st.Image.Id, nil
	}
	if policy == v1.PullNever {
		return "", fmt.Errorf("image %q is not present with pull policy of Never", src.Reference)
	}
	keyring, missing := credentials.ForPod(ctx, iv.secret, pod)
	if len(missing) > 0 {
		iv.recorder.Eventf(pod, v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
	}
	iv.recorder.Eventf(pod, v1.EventTypeNormal, "Pulling", "Pulling image %q", src.Reference)
	start := time.Now()
	ref, err := credentials.Pull(ctx, iv.rt, src.Reference, keyring.Lookup(src.Reference))
	if err != nil {
		iv.recorder.Eventf(pod, v1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", src.Reference, err)
		return "", fmt.Errorf("failed to pull image %q: %w", src.Reference, err)
	}
	d := time.Since(start).Round(time.Millisecond)
	iv.recorder.Eventf(pod, v1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s (%s including waiting)", src.Reference, d, d)
	return ref, nil
}

func (iv *imageVolumes) secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	return iv.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
