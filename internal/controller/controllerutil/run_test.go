package controllerutil

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

func TestLoopRun(t *testing.T) {
	never := func() bool { return false }
	always := func() bool { return true }
	cases := []struct {
		name    string
		synced  cache.InformerSynced
		start   error
		keys    []string
		wantErr string
		// wantSynced are the keys the workers handed to sync.
		wantSynced []string
		wantAlong  bool
	}{
		{name: "caches never sync", synced: never, keys: []string{"a"}, wantErr: "thing: caches did not sync"},
		{name: "start fails", synced: always, start: errors.New("no stock"), keys: []string{"a"}, wantErr: "no stock"},
		{name: "workers drain the queue", synced: always, keys: []string{"a", "b", "c"}, wantSynced: []string{"a", "b", "c"}, wantAlong: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue[string]("", nil)
			for _, k := range tc.keys {
				q.Add(k)
			}
			var mu sync.Mutex
			var synced []string
			all := make(chan struct{})
			along := make(chan struct{}, 1)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.wantErr != "" {
				// Only ctx can end a wait for caches that never sync.
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			defer cancel()
			l := Loop{
				Name: "thing", Synced: []cache.InformerSynced{tc.synced},
				Start: func(context.Context) error { return tc.start },
				Workers: []Workers{NewWorkers(2, q, func(_ context.Context, k string) error {
					mu.Lock()
					defer mu.Unlock()
					synced = append(synced, k)
					if len(synced) == len(tc.keys) {
						close(all)
					}
					return nil
				}, slog.New(slog.DiscardHandler), "key")},
				Alongside: []func(context.Context){func(ctx context.Context) { along <- struct{}{}; <-ctx.Done() }},
			}
			done := make(chan error, 1)
			go func() { done <- l.Run(ctx) }()
			if tc.wantErr == "" {
				select {
				case <-all:
				case <-time.After(5 * time.Second):
					t.Fatal("workers did not drain the queue")
				}
				cancel()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after ctx ended")
			}
			if got := errString(err); got != tc.wantErr {
				t.Errorf("Run = %q, want %q", got, tc.wantErr)
			}
			mu.Lock()
			slices.Sort(synced)
			if !slices.Equal(synced, tc.wantSynced) {
				t.Errorf("synced %v, want %v", synced, tc.wantSynced)
			}
			mu.Unlock()
			if got := len(along) == 1; got != tc.wantAlong {
				t.Errorf("alongside ran: %v, want %v", got, tc.wantAlong)
			}
			if !q.ShuttingDown() {
				t.Error("queue still open after Run returned")
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
