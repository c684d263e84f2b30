package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/orca-project/orca/internal/kubelet/eviction"
)

func TestPressureFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
		check   func(t *testing.T, o Options)
	}{
		{args: nil, check: func(t *testing.T, o Options) {
			if n := len(o.Eviction.Thresholds); n != 4 {
				t.Errorf("default hard thresholds: %d", n)
			}
			if o.Eviction.PressureTransitionPeriod != 5*time.Minute || o.ImageGC.HighThresholdPercent != 85 || o.ImageGC.LowThresholdPercent != 80 || o.ImageGC.MinAge != 2*time.Minute {
				t.Errorf("defaults %+v %+v", o.Eviction, o.ImageGC)
			}
			if o.LogRotation.MaxSize != 10<<20 || o.LogRotation.MaxFiles != 5 {
				t.Errorf("log rotation defaults %+v", o.LogRotation)
			}
		}},
		{args: []string{"--eviction-hard", "memory.available<1Gi", "--eviction-soft", "nodefs.available<20%", "--eviction-soft-grace-period", "nodefs.available=1m",
			"--container-log-max-size", "1Mi", "--container-log-max-files", "3", "--image-minimum-gc-age", "1s"}, check: func(t *testing.T, o Options) {
			if got := o.Eviction.HardAmount(eviction.MemoryAvailable, 0); got != 1<<30 {
				t.Errorf("memory hard threshold %d", got)
			}
			if got := o.Eviction.HardAmount(eviction.NodeFsAvailable, 100); got != 0 {
				t.Errorf("nodefs hard threshold %d: a given --eviction-hard replaces the defaults", got)
			}
			if len(o.Eviction.Thresholds) != 2 || o.Eviction.Thresholds[1].GracePeriod != time.Minute {
				t.Errorf("thresholds %+v", o.Eviction.Thresholds)
			}
			if o.LogRotation.MaxSize != 1<<20 || o.LogRotation.MaxFiles != 3 || o.ImageGC.MinAge != time.Second {
				t.Errorf("%+v %+v", o.LogRotation, o.ImageGC)
			}
		}},
		{args: []string{"--eviction-soft", "memory.available<1Gi"}, wantErr: "grace period must be specified"},
		{args: []string{"--container-log-max-size", "big"}, wantErr: "invalid --container-log-max-size"},
		{args: []string{"--container-log-max-files", "1"}, wantErr: "must be at least 2"},
		{args: []string{"--image-gc-high-threshold", "70"}, wantErr: "low <= high"},
	} {
		fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
		var f PressureFlags
		f.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		var o Options
		err := f.Apply(&o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		tc.check(t, o)
	}
}
