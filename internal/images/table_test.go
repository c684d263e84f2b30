package images

import (
	"strings"
	"testing"
)

func TestHumanSize(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0B"},
		{311, "311B"},
		{1000, "1kB"},
		{1234567, "1.23MB"},
		{742_000, "742kB"},
		{2_500_000_000, "2.5GB"},
	} {
		if got := HumanSize(tc.n); got != tc.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	imgs := []Image{
		{ID: "sha256:f1e2d3c4b5a6978877665544", RepoTags: []string{"localhost/orca/pause:1.0"}, Size: 742_000},
		{ID: "sha256:0123456789abcdef0123", RepoTags: []string{"localhost:5000/app:v2", "localhost/orca/busybox:1.35"}, Size: 1_234_567},
		{ID: "sha256:aaaaaaaaaaaaaaaaaaaa", RepoDigests: []string{"docker.io/library/old@sha256:bbbb"}, Size: 10},
	}
	var b strings.Builder
	if err := WriteTable(&b, imgs); err != nil {
		t.Fatal(err)
	}
	want := `IMAGE                    TAG      IMAGE ID        SIZE
docker.io/library/old    <none>   aaaaaaaaaaaaa   10B
localhost/orca/busybox   1.35     0123456789abc   1.23MB
localhost/orca/pause     1.0      f1e2d3c4b5a69   742kB
localhost:5000/app       v2       0123456789abc   1.23MB
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}
