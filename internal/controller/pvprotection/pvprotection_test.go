package pvprotection

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func volume(deleting bool, phase v1.PersistentVolumePhase, finalizers ...string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1", ResourceVersion: "7", Finalizers: finalizers},
		Status:     v1.PersistentVolumeStatus{Phase: phase},
	}
	if deleting {
		now := metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
		pv.DeletionTimestamp = &now
	}
	return pv
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		pv   *v1.PersistentVolume
		want action
		sync bool
	}{
		{"live with the finalizer", volume(false, v1.VolumeBound, Finalizer), keep, false},
		{"live without it gets it", volume(false, v1.VolumeAvailable), addFinalizer, true},
		{"live with others gets it too", volume(false, v1.VolumeAvailable, "example.com/x"), addFinalizer, true},
		{"deleting while bound keeps it", volume(true, v1.VolumeBound, Finalizer), keep, true},
		{"deleting once released loses it", volume(true, v1.VolumeReleased, Finalizer), removeFinalizer, true},
		{"deleting while available loses it", volume(true, v1.VolumeAvailable, Finalizer), removeFinalizer, true},
		{"deleting after failure loses it", volume(true, v1.VolumeFailed, "example.com/x", Finalizer), removeFinalizer, true},
		{"deleting without a phase loses it", volume(true, "", Finalizer), removeFinalizer, true},
		{"deleting without it gets nothing", volume(true, v1.VolumeReleased, "example.com/x"), keep, false},
	} {
		if got := decide(tc.pv); got != tc.want {
			t.Errorf("%s: decide = %v, want %v", tc.name, got, tc.want)
		}
		if got := needsSync(tc.pv); got != tc.sync {
			t.Errorf("%s: needsSync = %v, want %v", tc.name, got, tc.sync)
		}
	}
}

func newTestController(t *testing.T, pv *v1.PersistentVolume) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(pv)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(pv); err != nil {
		t.Fatal(err)
	}
	return c, client
}

func updates(client *fake.Clientset) []*v1.PersistentVolume {
	var out []*v1.PersistentVolume
	for _, a := range client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok {
			out = append(out, u.GetObject().(*v1.PersistentVolume))
		}
	}
	return out
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		pv   *v1.PersistentVolume
		want []string // finalizers written; nil: no update
	}{
		{"a bound volume being deleted is kept", volume(true, v1.VolumeBound, "example.com/x", Finalizer), nil},
		{"a released volume being deleted is let go", volume(true, v1.VolumeReleased, "example.com/x", Finalizer), []string{"example.com/x"}},
		{"an old volume gets the finalizer", volume(false, v1.VolumeAvailable, "example.com/x"), []string{"example.com/x", Finalizer}},
		{"a protected live volume is left alone", volume(false, v1.VolumeBound, Finalizer), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client := newTestController(t, tc.pv)
			if err := c.sync(ctx, "pv1"); err != nil {
				t.Fatal(err)
			}
			ups := updates(client)
			if tc.want == nil {
				if len(ups) != 0 {
					t.Fatalf("updated %v", ups[0].Finalizers)
				}
				return
			}
			if len(ups) != 1 {
				t.Fatalf("%d updates, want 1", len(ups))
			}
			if got := ups[0].Finalizers; !slices.Equal(got, tc.want) {
				t.Errorf("finalizers %q, want %q", got, tc.want)
			}
			if ups[0].ResourceVersion != "7" {
				t.Errorf("update at resourceVersion %q, want the cached 7", ups[0].ResourceVersion)
			}
		})
	}
}

// A volume changed since the cache saw it is not overwritten: the
// conflict comes back so that the key is retried.
func TestSyncRetriesOnConflict(t *testing.T) {
	pv := volume(true, v1.VolumeReleased, Finalizer)
	c, client := newTestController(t, pv)
	client.PrependReactor("update", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("persistentvolumes"), "pv1", nil)
	})
	if err := c.sync(context.Background(), "pv1"); !apierrors.IsConflict(err) {
		t.Fatalf("sync = %v, want the conflict", err)
	}
}
