package volume

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestMounts(t *testing.T) {
	src := newFakeSources()
	src.configMaps["shop/app"] = &v1.ConfigMap{Data: map[string]string{"app.conf": "conf"}}
	m := newManager(t, src)
	outside := t.TempDir()
	pod := podWith(
		v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	)
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	scratch := vols["scratch"].HostPath
	if err := os.Symlink(outside, filepath.Join(scratch, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(scratch, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(scratch, "inside")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"POD_NAME": "web", "EMPTY": ""}
	cfgFile, _ := filepath.EvalSymlinks(filepath.Join(vols["cfg"].HostPath, "app.conf"))

	private := runtimeapi.MountPropagation_PROPAGATION_PRIVATE
	tests := []struct {
		name    string
		mount   v1.VolumeMount
		want    *runtimeapi.Mount
		wantErr string
		made    string // a directory the mount must have created
	}{
		{name: "writable emptyDir", mount: v1.VolumeMount{Name: "scratch", MountPath: "/data"},
			want: &runtimeapi.Mount{ContainerPath: "/data", HostPath: scratch, Propagation: private}},
		{name: "mount asks read-only", mount: v1.VolumeMount{Name: "scratch", MountPath: "/data", ReadOnly: true},
			want: &runtimeapi.Mount{ContainerPath: "/data", HostPath: scratch, Readonly: true, Propagation: private}},
		{name: "configMap is read-only whatever the mount says", mount: v1.VolumeMount{Name: "cfg", MountPath: "/etc/app"},
			want: &runtimeapi.Mount{ContainerPath: "/etc/app", HostPath: vols["cfg"].HostPath, Readonly: true, Propagation: private}},
		{name: "subPath of one configMap file resolves through ..data", mount: v1.VolumeMount{Name: "cfg", MountPath: "/etc/app.conf", SubPath: "app.conf"},
			want: &runtimeapi.Mount{ContainerPath: "/etc/app.conf", HostPath: cfgFile, Readonly: true, Propagation: private}},
		{name: "missing subPath is created", mount: v1.VolumeMount{Name: "scratch", MountPath: "/logs", SubPath: "logs/app"},
			want: &runtimeapi.Mount{ContainerPath: "/logs", HostPath: filepath.Join(scratch, "logs/app"), Propagation: private}, made: filepath.Join(scratch, "logs/app")},
		{name: "symlink inside the volume", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "inside"},
			want: &runtimeapi.Mount{ContainerPath: "/x", HostPath: filepath.Join(scratch, "real"), Propagation: private}},
		{name: "subPathExpr", mount: v1.VolumeMount{Name: "scratch", MountPath: "/logs", SubPathExpr: "pods/$(POD_NAME)/$$x"},
			want: &runtimeapi.Mount{ContainerPath: "/logs", HostPath: filepath.Join(scratch, "pods/web/$x"), Propagation: private}, made: filepath.Join(scratch, "pods/web/$x")},
		{name: "subPathExpr with an unset variable", mount: v1.VolumeMount{Name: "scratch", MountPath: "/logs", SubPathExpr: "$(NOPE)/$(EMPTY)"},
			wantErr: "missing value for EMPTY, NOPE"},
		{name: "subPath with '..'", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "a/../../etc"},
			wantErr: "unable to provision SubPath `a/../../etc`: must not contain '..'"},
		{name: "subPathExpr expanding to '..'", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPathExpr: "$(UP)"},
			wantErr: "unable to provision SubPath `..`: must not contain '..'"},
		{name: "absolute subPath", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "/etc"},
			wantErr: "error SubPath `/etc` must not be an absolute path"},
		{name: "symlink leaving the volume", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "escape"},
			wantErr: "not within volume path"},
		{name: "creating under a symlink leaving the volume", mount: v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "escape/new"},
			wantErr: "not within volume path"},
		{name: "HostToContainer", mount: v1.VolumeMount{Name: "scratch", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationHostToContainer)},
			want: &runtimeapi.Mount{ContainerPath: "/d", HostPath: scratch, Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}},
		{name: "Bidirectional", mount: v1.VolumeMount{Name: "scratch", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationBidirectional)},
			want: &runtimeapi.Mount{ContainerPath: "/d", HostPath: scratch, Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}},
		{name: "None", mount: v1.VolumeMount{Name: "scratch", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationNone)},
			want: &runtimeapi.Mount{ContainerPath: "/d", HostPath: scratch, Propagation: private}},
		{name: "invalid propagation", mount: v1.VolumeMount{Name: "scratch", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationMode("Sideways"))},
			wantErr: `invalid MountPropagation mode: "Sideways"`},
		{name: "recursive read-only", mount: v1.VolumeMount{Name: "scratch", MountPath: "/d", ReadOnly: true, RecursiveReadOnly: ptr(v1.RecursiveReadOnlyEnabled)},
			want: &runtimeapi.Mount{ContainerPath: "/d", HostPath: scratch, Readonly: true, RecursiveReadOnly: true, Propagation: private}},
		{name: "unknown volume", mount: v1.VolumeMount{Name: "nope", MountPath: "/d"},
			wantErr: `cannot find volume "nope" to mount into container "app"`},
	}
	env["UP"] = ".."
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1.Container{Name: "app", VolumeMounts: []v1.VolumeMount{tt.mount}}
			got, err := Mounts(pod, c, vols, env)
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].String() != tt.want.String() {
				t.Fatalf("mounts %v\nwant %v", got, tt.want)
			}
			if tt.made != "" {
				if info, err := os.Stat(tt.made); err != nil || !info.IsDir() || info.Mode().Perm() != 0o777 {
					t.Fatalf("subPath directory %v, %v; want a directory with the volume's mode", info, err)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("a subPath created %v outside the volume", entries)
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	mapping := func(k string) string { return vars[k] }
	tests := map[string]string{
		"":                "",
		"plain":           "plain",
		"$(A)":            "1",
		"x/$(A)/$(B)/y":   "x/1/two/y",
		"$$(A)":           "$(A)",
		"$$$(A)":          "$1",
		"$(A":             "$(A",
		"$A":              "$A",
		"end$":            "end$",
		"$(MISSING)-$(A)": "-1",
	}
	for in, want := range tests {
		if got := expand(in, mapping); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
