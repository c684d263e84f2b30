package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestConfigMapAndSecretVolumes(t *testing.T) {
	cmVol := func(src v1.ConfigMapVolumeSource) v1.Volume {
		return v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &src}}
	}
	secretVol := func(src v1.SecretVolumeSource) v1.Volume {
		return v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{Secret: &src}}
	}
	ref := func(name string) v1.LocalObjectReference { return v1.LocalObjectReference{Name: name} }
	type file struct {
		content string
		mode    os.FileMode
	}
	tests := []struct {
		name    string
		vol     v1.Volume
		want    map[string]file
		wantErr string
	}{
		{
			name: "configMap, every key with the default mode",
			vol:  cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("app")}),
			want: map[string]file{"a.conf": {"A", 0o644}, "b.conf": {"B", 0o644}, "bin": {"\x00\x01", 0o644}},
		},
		{
			name: "configMap items with paths, per-item mode and defaultMode",
			vol: cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("app"), DefaultMode: ptr(int32(0o600)), Items: []v1.KeyToPath{
				{Key: "a.conf", Path: "etc/a"}, {Key: "b.conf", Path: "b", Mode: ptr(int32(0o400))},
			}}),
			want: map[string]file{"etc": {}, "etc/a": {"A", 0o600}, "b": {"B", 0o400}},
		},
		{
			name:    "configMap missing",
			vol:     cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("nope")}),
			wantErr: `MountVolume.SetUp failed for volume "cfg" : configmap "nope" not found`,
		},
		{
			name: "optional configMap missing gives an empty volume",
			vol:  cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("nope"), Optional: ptr(true)}),
			want: map[string]file{},
		},
		{
			name:    "configMap item with a missing key",
			vol:     cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("app"), Items: []v1.KeyToPath{{Key: "zzz", Path: "z"}}}),
			wantErr: `MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: zzz`,
		},
		{
			name: "optional configMap skips a missing key",
			vol: cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("app"), Optional: ptr(true), Items: []v1.KeyToPath{
				{Key: "zzz", Path: "z"}, {Key: "a.conf", Path: "a"},
			}}),
			want: map[string]file{"a": {"A", 0o644}},
		},
		{
			name:    "item path leaving the volume",
			vol:     cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("app"), Items: []v1.KeyToPath{{Key: "a.conf", Path: "../../etc/passwd"}}}),
			wantErr: `MountVolume.SetUp failed for volume "cfg" : invalid path: must not contain '..': ../../etc/passwd`,
		},
		{
			name:    "key that is not a valid path",
			vol:     cmVol(v1.ConfigMapVolumeSource{LocalObjectReference: ref("badkey")}),
			wantErr: `invalid path: must not start with '..': ..data`,
		},
		{
			name: "secret, every key",
			vol:  secretVol(v1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o400))}),
			want: map[string]file{"user": {"admin", 0o400}, "pass": {"s3cret", 0o400}},
		},
		{
			name:    "secret missing",
			vol:     secretVol(v1.SecretVolumeSource{SecretName: "nope"}),
			wantErr: `MountVolume.SetUp failed for volume "cfg" : secret "nope" not found`,
		},
		{
			name:    "secret item with a missing key",
			vol:     secretVol(v1.SecretVolumeSource{SecretName: "creds", Items: []v1.KeyToPath{{Key: "token", Path: "t"}}}),
			wantErr: `MountVolume.SetUp failed for volume "cfg" : references non-existent secret key: token`,
		},
		{
			name: "optional secret missing",
			vol:  secretVol(v1.SecretVolumeSource{SecretName: "nope", Optional: ptr(true)}),
			want: map[string]file{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFakeSources()
			src.configMaps["shop/app"] = &v1.ConfigMap{Data: map[string]string{"a.conf": "A", "b.conf": "B"}, BinaryData: map[string][]byte{"bin": {0, 1}}}
			src.configMaps["shop/badkey"] = &v1.ConfigMap{Data: map[string]string{"..data": "x"}}
			src.secrets["shop/creds"] = &v1.Secret{Data: map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cret")}}
			m := newManager(t, src)
			vols, err := setup(t, m, podWith(tt.vol))
			if tt.wantErr != "" {
				var me *MountError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &me) || me.Volume != "cfg" {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if _, ok := vols["cfg"]; ok {
					t.Fatal("a failed volume is in the result")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			vol := vols["cfg"]
			plugin := pluginConfigMap
			if tt.vol.Secret != nil {
				plugin = pluginSecret
			}
			if want := filepath.Join(m.Root, "uid-1", "volumes", plugin, "cfg"); vol.HostPath != want || !vol.ReadOnly {
				t.Fatalf("volume = %+v, want read-only %s", vol, want)
			}
			got := userFiles(t, vol.HostPath)
			var want []string
			for name := range tt.want {
				want = append(want, name)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("files %v, want %v", got, want)
			}
			for name, f := range tt.want {
				if f.mode == 0 {
					continue
				}
				p := filepath.Join(vol.HostPath, name)
				if c := readFile(t, p); c != f.content {
					t.Errorf("%s = %q, want %q", name, c, f.content)
				}
				if mode, _ := statOf(t, p); mode.Perm() != f.mode {
					t.Errorf("%s mode %v, want %v", name, mode.Perm(), f.mode)
				}
			}
		})
	}
}

func TestSecretVolumeIsTmpfsAndGroupOwned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs and changing groups need root")
	}
	src := newFakeSources()
	src.secrets["shop/creds"] = &v1.Secret{Data: map[string][]byte{"pass": []byte("s3cret")}}
	m := newManager(t, src)
	pod := podWith(v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o400))}}})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr(int64(2000))}
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["s"].HostPath
	if mounted, err := isMountPoint(dir); err != nil || !mounted {
		t.Fatalf("secret volume is not a mount point: %v", err)
	}
	opts := mountOptions(t, dir)
	if !strings.Contains(opts, "size=65536k") {
		t.Errorf("tmpfs options %q, want the pod's 64Mi memory limit as size", opts)
	}
	if mode, gid := statOf(t, filepath.Join(dir, "pass")); mode.Perm() != 0o440 || gid != 2000 {
		t.Errorf("pass mode %v gid %d, want 0440 and group 2000", mode.Perm(), gid)
	}
	// A second Setup (the resync) does not stack another tmpfs.
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if n := countMounts(t, dir); n != 1 {
		t.Fatalf("%d mounts on the secret volume after resync", n)
	}
}

func TestResyncFollowsConfigMap(t *testing.T) {
	src := newFakeSources()
	src.configMaps["shop/app"] = &v1.ConfigMap{Data: map[string]string{"a": "1", "b": "1"}}
	m := newManager(t, src)
	pod := podWith(v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["cfg"].HostPath
	first, _ := os.Readlink(filepath.Join(dir, "..data"))

	// Nothing changed: nothing is written.
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, "..data")); again != first {
		t.Fatalf("an unchanged configMap was rewritten: %s -> %s", first, again)
	}

	src.configMaps["shop/app"] = &v1.ConfigMap{Data: map[string]string{"a": "2", "c": "2"}}
	if _, err := m.Setup(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "2" {
		t.Fatalf("a = %q after the configMap changed", got)
	}
	if got := userFiles(t, dir); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("files %v after update, want [a c]", got)
	}
	// The version a reader resolved before the update is still whole.
	if a, b := readFile(t, filepath.Join(dir, first, "a")), readFile(t, filepath.Join(dir, first, "b")); a != "1" || b != "1" {
		t.Fatalf("previous version reads a=%q b=%q", a, b)
	}
}

func TestDownwardAPIVolume(t *testing.T) {
	m := newManager(t, newFakeSources())
	m.NodeAllocatable = v1.ResourceList{v1.ResourceCPU: mustQuantity("4")}
	vol := v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "meta/name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr(int32(0o400))},
		{Path: "mem", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: mustQuantity("1Mi")}},
		{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: mustQuantity("1m")}},
	}}}}
	vols, err := setup(t, m, podWith(vol))
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["info"].HostPath
	for name, want := range map[string]string{"labels": `app="web"`, "meta/name": "web", "mem": "64", "cpu": "4000"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if mode, _ := statOf(t, filepath.Join(dir, "meta/name")); mode.Perm() != 0o400 {
		t.Errorf("meta/name mode %v", mode.Perm())
	}
	if !vols["info"].ReadOnly {
		t.Error("downwardAPI volume is not read-only")
	}

	bad := v1.Volume{Name: "bad", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
		{Path: "x", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "ghost", Resource: "limits.cpu"}},
	}}}}
	pod := podWith(bad)
	pod.UID = "uid-2"
	_, err = setup(t, m, pod)
	if err == nil || err.Error() != `MountVolume.SetUp failed for volume "bad" : container ghost not found` {
		t.Fatalf("err = %v", err)
	}
}

func TestProjectedVolume(t *testing.T) {
	src := newFakeSources()
	src.configMaps["shop/kube-root-ca.crt"] = &v1.ConfigMap{Data: map[string]string{"ca.crt": "CA"}}
	src.secrets["shop/creds"] = &v1.Secret{Data: map[string][]byte{"pass": []byte("s3cret")}}
	m := newManager(t, src)
	vol := v1.Volume{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(0o444)),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", Audience: "vault", ExpirationSeconds: ptr(int64(7200))}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Items: []v1.KeyToPath{{Key: "pass", Path: "db/pass", Mode: ptr(int32(0o400))}}}},
		},
	}}}
	vols, err := setup(t, m, podWith(vol))
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["kube-api-access"].HostPath
	if !strings.HasSuffix(dir, "/volumes/kubernetes.io~projected/kube-api-access") || !vols["kube-api-access"].ReadOnly {
		t.Fatalf("volume %+v", vols["kube-api-access"])
	}
	for name, want := range map[string]string{"token": "token-1", "ca.crt": "CA", "namespace": "shop", "db/pass": "s3cret"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if mode, _ := statOf(t, filepath.Join(dir, "token")); mode.Perm() != 0o444 {
		t.Errorf("token mode %v, want defaultMode 0444", mode.Perm())
	}
	if mode, _ := statOf(t, filepath.Join(dir, "db/pass")); mode.Perm() != 0o400 {
		t.Errorf("db/pass mode %v", mode.Perm())
	}
	if len(src.tokenCalls) != 1 {
		t.Fatalf("%d token requests", len(src.tokenCalls))
	}
	req := src.tokenCalls[0].Spec
	ref := req.BoundObjectRef
	if !slices.Equal(req.Audiences, []string{"vault"}) || *req.ExpirationSeconds != 7200 ||
		ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "web" || ref.UID != "uid-1" {
		t.Fatalf("token request %+v", req)
	}

	// A missing source fails the whole volume, naming every failure.
	delete(src.secrets, "shop/creds")
	delete(src.configMaps, "shop/kube-root-ca.crt")
	_, err = m.Setup(t.Context(), podWith(vol))
	want := `MountVolume.SetUp failed for volume "kube-api-access" : [configmap "kube-root-ca.crt" not found, secret "creds" not found]`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// The published contents stay as they were.
	if got := readFile(t, filepath.Join(dir, "db/pass")); got != "s3cret" {
		t.Fatalf("db/pass = %q after a failed resync", got)
	}
}

func TestProjectedTokenWithFSGroupIsGroupReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing groups needs root")
	}
	m := newManager(t, newFakeSources())
	pod := podWith(v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(0o644)),
		Sources:     []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}},
	}}})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr(int64(3000))}
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	if mode, gid := statOf(t, filepath.Join(vols["tok"].HostPath, "token")); mode.Perm() != 0o640 || gid != 3000 {
		t.Fatalf("token mode %v gid %d, want 0640 and group 3000", mode.Perm(), gid)
	}
}

func TestSetupReportsEveryFailedVolume(t *testing.T) {
	m := newManager(t, newFakeSources())
	pod := podWith(
		v1.Volume{Name: "a", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "x"}}}},
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		v1.Volume{Name: "b", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "nfs", Path: "/"}}},
	)
	vols, err := setup(t, m, pod)
	if _, ok := vols["scratch"]; !ok {
		t.Fatal("a working volume was not prepared because others failed")
	}
	var failed []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var me *MountError
		if errors.As(e, &me) {
			failed = append(failed, fmt.Sprintf("%s: %v", me.Volume, e))
		}
	}
	want := []string{
		`a: MountVolume.SetUp failed for volume "a" : configmap "x" not found`,
		`b: MountVolume.SetUp failed for volume "b" : no volume plugin matched`,
	}
	if !slices.Equal(failed, want) {
		t.Fatalf("failures %q, want %q", failed, want)
	}
}
