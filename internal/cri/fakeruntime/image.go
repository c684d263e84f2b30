package fakeruntime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"github.com/distribution/reference"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type image struct {
	id   string
	tags []string
	size uint64
}

// normalize is the reference containerd stores an image under:
// "busybox" is docker.io/library/busybox:latest.
func normalize(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(named).String()
}

// imageID is the image's ID, derived from its reference so that the same
// image always has the same ID.
func imageID(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// AddImage makes an image present, as if imported.
func (r *Runtime) AddImage(ref string, size uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addImage(normalize(ref), size)
}

func (r *Runtime) addImage(ref string, size uint64) *image {
	id := imageID(ref)
	img, ok := r.images[id]
	if !ok {
		img = &image{id: id, tags: []string{ref}, size: size}
		r.images[id] = img
	}
	return img
}

// AddRegistryImage makes an image pullable, as if a registry served it.
func (r *Runtime) AddRegistryImage(ref string, size uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registry[normalize(ref)] = size
}

// findImage resolves a reference or an image ID; r.mu is held.
func (r *Runtime) findImage(ref string) *image {
	if ref == "" {
		return nil
	}
	if img, ok := r.images[ref]; ok {
		return img
	}
	if img, ok := r.images["sha256:"+ref]; ok {
		return img
	}
	return r.images[imageID(normalize(ref))]
}

func (img *image) api() *runtimeapi.Image {
	return &runtimeapi.Image{Id: img.id, RepoTags: append([]string(nil), img.tags...), Size: img.size, Spec: &runtimeapi.ImageSpec{Image: img.id}}
}

// PullImage makes a registry image present and returns its ID.
func (r *Runtime) PullImage(_ context.Context, in *runtimeapi.PullImageRequest, _ ...grpc.CallOption) (*runtimeapi.PullImageResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("PullImage", in)
	ref := normalize(in.GetImage().GetImage())
	size, ok := r.registry[ref]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", ref, ref, ref)
	}
	return &runtimeapi.PullImageResponse{ImageRef: r.addImage(ref, size).id}, nil
}

// ImageStatus reports an image, or none (and no error) when absent.
func (r *Runtime) ImageStatus(_ context.Context, in *runtimeapi.ImageStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ImageStatus", in)
	img := r.findImage(in.GetImage().GetImage())
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: img.api()}, nil
}

// ListImages lists present images, optionally only the one the filter
// names.
func (r *Runtime) ListImages(_ context.Context, in *runtimeapi.ListImagesRequest, _ ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ListImages", in)
	out := &runtimeapi.ListImagesResponse{}
	if want := in.GetFilter().GetImage().GetImage(); want != "" {
		if img := r.findImage(want); img != nil {
			out.Images = append(out.Images, img.api())
		}
		return out, nil
	}
	for _, img := range r.images {
		out.Images = append(out.Images, img.api())
	}
	sort.Slice(out.Images, func(i, j int) bool { return out.Images[i].Id < out.Images[j].Id })
	return out, nil
}

// RemoveImage removes an image; an absent one is already removed. As
// containerd's, it does not check whether containers use the image: that
// is the kubelet's image collector's job.
func (r *Runtime) RemoveImage(_ context.Context, in *runtimeapi.RemoveImageRequest, _ ...grpc.CallOption) (*runtimeapi.RemoveImageResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("RemoveImage", in)
	if img := r.findImage(in.GetImage().GetImage()); img != nil {
		delete(r.images, img.id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// SetImageFsInfo sets what ImageFsInfo reports; by default it reports the
// images' total size as used.
func (r *Runtime) SetImageFsInfo(info *runtimeapi.ImageFsInfoResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fsInfo = info
}

// ImageFsInfo reports the image file system's use.
func (r *Runtime) ImageFsInfo(_ context.Context, in *runtimeapi.ImageFsInfoRequest, _ ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("ImageFsInfo", in)
	if r.fsInfo != nil {
		return proto.Clone(r.fsInfo).(*runtimeapi.ImageFsInfoResponse), nil
	}
	var used uint64
	for _, img := range r.images {
		used += img.size
	}
	fs := &runtimeapi.FilesystemUsage{
		Timestamp:  r.now(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/fakeruntime/images"},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(r.images))},
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{fs}}, nil
}
