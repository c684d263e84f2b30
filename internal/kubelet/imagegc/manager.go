package imagegc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is the part of the CRI the collector uses.
type Runtime interface {
	ListImages(ctx context.Context, in *runtimeapi.ListImagesRequest, opts ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error)
	RemoveImage(ctx context.Context, in *runtimeapi.RemoveImageRequest, opts ...grpc.CallOption) (*runtimeapi.RemoveImageResponse, error)
	ImageStatus(ctx context.Context, in *runtimeapi.ImageStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error)
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
}

// Manager collects one node's images.
type Manager struct {
	Runtime Runtime
	Policy  Policy
	// SandboxImage is the pause image's reference, never removed.
	SandboxImage string
	// ImageFs is a directory on the image file system.
	ImageFs  string
	Recorder record.EventRecorder
	Node     *v1.ObjectReference
	Log      *slog.Logger
	// Interval between periodic collections (5 min).
	Interval time.Duration
	// DetectInterval is how often images and their use are recorded
	// between collections (30 s, upstream's image cache period): an
	// image imported since is not eligible until seen and MinAge old.
	DetectInterval time.Duration

	mu     sync.Mutex
	images map[string]*Image
	// detected is set once the first detection ran: images found then
	// count as detected long ago, as upstream's.
	detected bool
}

// detect refreshes the record of images and returns it with the images
// containers use and the sandbox image's ID.
func (m *Manager) detect(ctx context.Context, now time.Time) ([]Image, map[string]bool, string, error) {
	imgs, err := m.Runtime.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, nil, "", fmt.Errorf("list images: %w", err)
	}
	ctrs, err := m.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, nil, "", fmt.Errorf("list containers: %w", err)
	}
	inUse := map[string]bool{}
	for _, c := range ctrs.Containers {
		// Any container, running or not, holds its image, as upstream.
		inUse[c.ImageRef] = true
		if c.Image != nil {
			inUse[c.Image.Image] = true
		}
	}
	sandbox := ""
	if m.SandboxImage != "" {
		if st, err := m.Runtime.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: m.SandboxImage}}); err == nil && st.Image != nil {
			sandbox = st.Image.Id
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.images == nil {
		m.images = map[string]*Image{}
	}
	seen := map[string]bool{}
	var out []Image
	for _, img := range imgs.Images {
		seen[img.Id] = true
		rec, ok := m.images[img.Id]
		if !ok {
			rec = &Image{ID: img.Id}
			if m.detected {
				rec.FirstDetected = now
			}
			m.images[img.Id] = rec
		}
		rec.Size, rec.Pinned = int64(img.Size), img.Pinned
		used := inUse[img.Id]
		for _, n := range append(append([]string{}, img.RepoTags...), img.RepoDigests...) {
			if inUse[n] {
				used = true
			}
		}
		if used {
			inUse[img.Id] = true
			rec.LastUsed = now
		}
		out = append(out, *rec)
	}
	for id := range m.images {
		if !seen[id] {
			delete(m.images, id)
		}
	}
	m.detected = true
	return out, inUse, sandbox, nil
}

// freeSpace removes images chosen to free want bytes and returns what
// was freed.
func (m *Manager) freeSpace(ctx context.Context, want int64) (int64, error) {
	now := time.Now()
	images, inUse, sandbox, err := m.detect(ctx, now)
	if err != nil {
		return 0, err
	}
	chosen, _ := Choose(images, inUse, sandbox, m.Policy.MinAge, now, want)
	var freed int64
	var errs []error
	for _, img := range chosen {
		m.log().Info("removing unused image", "image", img.ID, "size", img.Size, "lastUsed", img.LastUsed)
		if _, err := m.Runtime.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: img.ID}}); err != nil {
			errs = append(errs, fmt.Errorf("remove image %s: %w", img.ID, err))
			continue
		}
		m.mu.Lock()
		delete(m.images, img.ID)
		m.mu.Unlock()
		freed += img.Size
	}
	return freed, errors.Join(errs...)
}

// GarbageCollect is one periodic collection, as upstream's: nothing
// below the high threshold, else down to the low one; not finding
// enough to remove is a FreeDiskSpaceFailed event and an error.
func (m *Manager) GarbageCollect(ctx context.Context) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(m.ImageFs, &st); err != nil {
		return fmt.Errorf("image filesystem stats: %w", err)
	}
	capacity, available := int64(st.Blocks)*st.Bsize, int64(st.Bavail)*st.Bsize
	want := m.Policy.ToFree(capacity, available)
	if want <= 0 {
		return nil
	}
	usage := 100 - available*100/capacity
	m.log().Info("disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold", "usage", usage, "highThreshold", m.Policy.HighThresholdPercent, "amountToFree", want, "lowThreshold", m.Policy.LowThresholdPercent)
	freed, err := m.freeSpace(ctx, want)
	if err != nil {
		return err
	}
	if freed < want {
		msg := fmt.Sprintf("Failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free.", want, freed)
		m.event(v1.EventTypeWarning, "FreeDiskSpaceFailed", msg)
		return errors.New(msg)
	}
	return nil
}

// DeleteUnusedImages removes every image eligible, for the eviction
// manager under disk pressure.
func (m *Manager) DeleteUnusedImages(ctx context.Context) error {
	_, err := m.freeSpace(ctx, math.MaxInt64)
	return err
}

// Run collects every Interval until ctx ends; a failed collection is an
// ImageGCFailed event on the node.
func (m *Manager) Run(ctx context.Context) {
	if m.Interval == 0 {
		m.Interval = 5 * time.Minute
	}
	if m.DetectInterval == 0 {
		m.DetectInterval = 30 * time.Second
	}
	// The first detection records what exists, as from long ago; later
	// ones date new images and keep last use fresh.
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		if _, _, _, err := m.detect(ctx, time.Now()); err != nil && ctx.Err() == nil {
			m.log().Warn("image garbage collection: detect images", "err", err)
		}
	}, m.DetectInterval)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := m.GarbageCollect(ctx); err != nil && ctx.Err() == nil {
			m.log().Warn("image garbage collection failed", "err", err)
			m.event(v1.EventTypeWarning, "ImageGCFailed", err.Error())
		}
	}, m.Interval)
}

func (m *Manager) event(typ, reason, msg string) {
	if m.Recorder != nil && m.Node != nil {
		m.Recorder.Event(m.Node, typ, reason, msg)
	}
}

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.Default()
	}
	return m.Log
}
