package imagemount

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	digest "github.com/opencontainers/go-digest"
	"golang.org/x/sys/unix"
)

func TestChainID(t *testing.T) {
	a := digest.Digest("sha256:" + strings.Repeat("a", 64))
	b := digest.Digest("sha256:" + strings.Repeat("b", 64))
	c := digest.Digest("sha256:" + strings.Repeat("c", 64))
	sum := func(s string) digest.Digest {
		h := sha256.Sum256([]byte(s))
		return digest.Digest("sha256:" + hex.EncodeToString(h[:]))
	}
	ab := sum(a.String() + " " + b.String())
	for _, tc := range []struct {
		diffs []digest.Digest
		want  digest.Digest
	}{
		{nil, ""},
		{[]digest.Digest{a}, a},
		{[]digest.Digest{a, b}, ab},
		{[]digest.Digest{a, b, c}, sum(ab.String() + " " + c.String())},
	} {
		if got := chainID(tc.diffs); got != tc.want {
			t.Errorf("chainID(%v) = %s, want %s", tc.diffs, got, tc.want)
		}
	}
}

func TestPickManifest(t *testing.T) {
	index := `{"schemaVersion":2,"manifests":[
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","size":1,"platform":{"os":"linux","architecture":"arm64","variant":"v8"}},
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","size":1,"platform":{"os":"windows","architecture":"amd64"}},
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","size":1,"platform":{"os":"linux","architecture":"amd64"}},
	 {"mediaType":"application/vnd.in-toto+json","digest":"sha256:4444444444444444444444444444444444444444444444444444444444444444","size":1,"platform":{"os":"linux","architecture":"amd64"}}]}`
	d, err := pickManifest([]byte(index), "linux", "amd64", "")
	if err != nil || !strings.HasPrefix(d.Digest.String(), "sha256:3333") {
		t.Errorf("linux/amd64: %v, %v; want the sha256:3333 manifest", d.Digest, err)
	}
	d, err = pickManifest([]byte(index), "linux", "arm64", "")
	if err != nil || !strings.HasPrefix(d.Digest.String(), "sha256:1111") {
		t.Errorf("linux/arm64 (any variant): %v, %v; want the sha256:1111 manifest", d.Digest, err)
	}
	if _, err := pickManifest([]byte(index), "linux", "s390x", ""); err == nil || !strings.Contains(err.Error(), "no manifest for linux/s390x") {
		t.Errorf("linux/s390x: %v, want no manifest", err)
	}
	if _, err := pickManifest([]byte("{"), "linux", "amd64", ""); err == nil {
		t.Error("a malformed index parsed")
	}
}

func TestConfigAndDiffIDs(t *testing.T) {
	cfg, err := configOf([]byte(`{"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:5555555555555555555555555555555555555555555555555555555555555555","size":2},"layers":[]}`))
	if err != nil || !strings.HasPrefix(cfg.Digest.String(), "sha256:5555") {
		t.Errorf("configOf: %v, %v", cfg.Digest, err)
	}
	if _, err := configOf([]byte(`{"schemaVersion":2}`)); err == nil {
		t.Error("a manifest without config passed")
	}
	diffs, err := diffIDs([]byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:6666666666666666666666666666666666666666666666666666666666666666"]}}`))
	if err != nil || len(diffs) != 1 {
		t.Errorf("diffIDs: %v, %v", diffs, err)
	}
	if _, err := diffIDs([]byte(`{"rootfs":{"type":"layers","diff_ids":[]}}`)); err == nil {
		t.Error("a config without layers passed")
	}
}

func TestKey(t *testing.T) {
	k := Key("/var/lib/orca/pods/uid/volumes/kubernetes.io~image/v")
	// containerd's identifier rule, which lease IDs must follow.
	if !regexp.MustCompile(`^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$`).MatchString(k) || len(k) > 76 {
		t.Errorf("Key = %q, not a valid containerd identifier", k)
	}
	if k != Key("/var/lib/orca/pods/uid/volumes/kubernetes.io~image/v") || k == Key("/other") {
		t.Error("Key is not a function of the target alone")
	}
}

func TestPlanMount(t *testing.T) {
	for _, tc := range []struct {
		name, fstype, source string
		options              []string
		want                 mountSpec
		err                  string
	}{
		{"one layer: a read-only bind", "bind", "/snap/1/fs", []string{"ro", "rbind"},
			mountSpec{source: "/snap/1/fs", flags: unix.MS_RDONLY | unix.MS_BIND | unix.MS_REC, remount: true}, ""},
		{"a writable bind is made read-only", "bind", "/snap/1/fs", []string{"rw", "rbind"},
			mountSpec{source: "/snap/1/fs", flags: unix.MS_RDONLY | unix.MS_BIND | unix.MS_REC, remount: true}, ""},
		{"layers: a read-only overlay", "overlay", "overlay", []string{"index=off", "lowerdir=/snap/2/fs:/snap/1/fs"},
			mountSpec{source: "overlay", fstype: "overlay", flags: unix.MS_RDONLY, data: "index=off,lowerdir=/snap/2/fs:/snap/1/fs"}, ""},
		{"too many layers", "overlay", "overlay", []string{"lowerdir=" + strings.Repeat("/snap/x/fs:", 1000)}, mountSpec{}, "exceed a page"},
	} {
		got, err := planMount(tc.fstype, tc.source, tc.options)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}
