package imagebuild

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// readTar returns the headers and contents of a tar, in order.
func readTar(t *testing.T, b []byte) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	var hdrs []*tar.Header
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hdrs, files
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
		files[h.Name] = data
	}
}

// archive is a docker archive read back: its manifest, config and layer.
type archive struct {
	manifest []manifestEntry
	config   imageConfig
	configID string
	layer    []*tar.Header
	content  map[string][]byte
}

func readArchive(t *testing.T, img Image) archive {
	t.Helper()
	var buf bytes.Buffer
	if err := img.Write(&buf); err != nil {
		t.Fatal(err)
	}
	_, files := readTar(t, buf.Bytes())
	var a archive
	if err := json.Unmarshal(files["manifest.json"], &a.manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(a.manifest) != 1 || len(a.manifest[0].Layers) != 1 {
		t.Fatalf("manifest %+v: want one image with one layer", a.manifest)
	}
	m := a.manifest[0]
	cfg, ok := files[m.Config]
	if !ok {
		t.Fatalf("config %s named in the manifest is not in the archive", m.Config)
	}
	a.configID = digest(cfg)
	if err := json.Unmarshal(cfg, &a.config); err != nil {
		t.Fatalf("config: %v", err)
	}
	layer, ok := files[m.Layers[0]]
	if !ok {
		t.Fatalf("layer %s named in the manifest is not in the archive", m.Layers[0])
	}
	if got := a.config.RootFS.DiffIDs; !slices.Equal(got, []string{digest(layer)}) {
		t.Errorf("diff_ids %v, want the layer's digest %s", got, digest(layer))
	}
	a.layer, a.content = readTar(t, layer)
	return a
}

func TestArchiveLayout(t *testing.T) {
	img := Image{
		Ref: "localhost/test/app:2",
		Entries: []Entry{
			FileEntry("/usr/bin/app", 0o755, []byte("#!/bin/sh\n")),
			SymlinkEntry("/bin/app", "/usr/bin/app"),
			DirEntry("/tmp", 0o777|fs.ModeSticky),
			{Path: "/home/user/.profile", Kind: File, Mode: 0o600, Content: []byte("x"), UID: 1000, GID: 1000},
		},
		Config: Config{
			Entrypoint: []string{"/bin/app"}, Cmd: []string{"serve"}, Env: []string{"A=b"},
			WorkingDir: "/home/user", User: "1000", ExposedPorts: []string{"8080", "53/udp"},
		},
	}
	a := readArchive(t, img)

	id, err := img.ID()
	if err != nil {
		t.Fatal(err)
	}
	m := a.manifest[0]
	if id != a.configID || m.Config != strings.TrimPrefix(id, "sha256:")+".json" {
		t.Errorf("ID %s, config file %s with digest %s: want all three to agree", id, m.Config, a.configID)
	}
	if !slices.Equal(m.RepoTags, []string{img.Ref}) {
		t.Errorf("RepoTags %v, want [%s]", m.RepoTags, img.Ref)
	}
	c := a.config
	if c.OS != "linux" || c.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", c.OS, c.Architecture, runtime.GOARCH)
	}
	rc := c.Config
	if !slices.Equal(rc.Entrypoint, []string{"/bin/app"}) || !slices.Equal(rc.Cmd, []string{"serve"}) ||
		!slices.Equal(rc.Env, []string{"A=b"}) || rc.WorkingDir != "/home/user" || rc.User != "1000" {
		t.Errorf("runtime config %+v does not match the image's", rc)
	}
	if _, ok := rc.ExposedPorts["8080/tcp"]; !ok || len(rc.ExposedPorts) != 2 {
		t.Errorf("ExposedPorts %v, want 8080/tcp and 53/udp", rc.ExposedPorts)
	}

	type want struct {
		typ      byte
		mode     int64
		link     string
		uid      int
		contents string
	}
	wants := map[string]want{
		"bin/":               {typ: tar.TypeDir, mode: 0o755},
		"bin/app":            {typ: tar.TypeSymlink, mode: 0o777, link: "/usr/bin/app"},
		"home/":              {typ: tar.TypeDir, mode: 0o755},
		"home/user/":         {typ: tar.TypeDir, mode: 0o755},
		"home/user/.profile": {typ: tar.TypeReg, mode: 0o600, uid: 1000, contents: "x"},
		"tmp/":               {typ: tar.TypeDir, mode: 0o1777},
		"usr/":               {typ: tar.TypeDir, mode: 0o755},
		"usr/bin/":           {typ: tar.TypeDir, mode: 0o755},
		"usr/bin/app":        {typ: tar.TypeReg, mode: 0o755, contents: "#!/bin/sh\n"},
	}
	var names []string
	for _, h := range a.layer {
		names = append(names, h.Name)
		w, ok := wants[h.Name]
		if !ok {
			t.Errorf("unexpected entry %s", h.Name)
			continue
		}
		if h.Typeflag != w.typ || h.Mode != w.mode || h.Linkname != w.link || h.Uid != w.uid || string(a.content[h.Name]) != w.contents {
			t.Errorf("%s: type %c mode %o link %q uid %d content %q, want %+v", h.Name, h.Typeflag, h.Mode, h.Linkname, h.Uid, a.content[h.Name], w)
		}
		if h.ModTime.Unix() != 0 {
			t.Errorf("%s: mtime %v, want the epoch", h.Name, h.ModTime)
		}
	}
	if len(names) != len(wants) {
		t.Errorf("layer has %v, want %d entries", names, len(wants))
	}
	if !slices.IsSorted(names) {
		t.Errorf("layer entries not sorted (parents first): %v", names)
	}
}

func TestSameInputSameID(t *testing.T) {
	entries := []Entry{FileEntry("/a", 0o644, []byte("a")), FileEntry("/b/c", 0o644, []byte("c")), SymlinkEntry("/d", "a")}
	reversed := slices.Clone(entries)
	slices.Reverse(reversed)
	id1, err := Image{Ref: "x:1", Entries: entries}.ID()
	if err != nil {
		t.Fatal(err)
	}
	id2, err := Image{Ref: "x:1", Entries: reversed}.ID()
	if err != nil {
		t.Fatal(err)
	}
	if id1 != id2 {
		t.Errorf("entry order changed the ID: %s vs %s", id1, id2)
	}
	id3, _ := Image{Ref: "x:1", Entries: []Entry{FileEntry("/a", 0o644, []byte("A"))}}.ID()
	if id3 == id1 {
		t.Error("different content gave the same ID")
	}
	var b1, b2 bytes.Buffer
	img := Image{Ref: "x:1", Entries: entries}
	if err := img.Write(&b1); err != nil {
		t.Fatal(err)
	}
	if err := img.Write(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("two writes of one image differ")
	}
}

func TestInvalidEntries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		img     Image
		wantErr string
	}{
		{"no reference", Image{}, "no reference"},
		{"relative path", Image{Ref: "x:1", Entries: []Entry{FileEntry("etc/passwd", 0o644, nil)}}, "must be absolute"},
		{"duplicate path", Image{Ref: "x:1", Entries: []Entry{DirEntry("/a", 0o755), FileEntry("/a/", 0o644, nil)}}, "duplicate"},
		{"file as a parent", Image{Ref: "x:1", Entries: []Entry{FileEntry("/a", 0o644, nil), FileEntry("/a/b", 0o644, nil)}}, "not a directory"},
		{"unknown kind", Image{Ref: "x:1", Entries: []Entry{{Path: "/a", Kind: Kind(9)}}}, "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.img.Write(io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Write: %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSplitRef(t *testing.T) {
	for _, tc := range []struct{ ref, repo, tag string }{
		{"localhost/orca/pause:1.0", "localhost/orca/pause", "1.0"},
		{"localhost:5000/app", "localhost:5000/app", "latest"},
		{"localhost:5000/app:v2", "localhost:5000/app", "v2"},
		{"busybox", "busybox", "latest"},
	} {
		if repo, tag := splitRef(tc.ref); repo != tc.repo || tag != tc.tag {
			t.Errorf("splitRef(%q) = %q, %q; want %q, %q", tc.ref, repo, tag, tc.repo, tc.tag)
		}
	}
}

func TestPause(t *testing.T) {
	a := readArchive(t, Pause([]byte("binary")))
	if got := a.manifest[0].RepoTags; !slices.Equal(got, []string{PauseRef}) {
		t.Errorf("RepoTags %v", got)
	}
	if !slices.Equal(a.config.Config.Entrypoint, []string{"/pause"}) {
		t.Errorf("Entrypoint %v, want [/pause]", a.config.Config.Entrypoint)
	}
	if len(a.layer) != 1 || a.layer[0].Name != "pause" || a.layer[0].Mode != 0o755 || string(a.content["pause"]) != "binary" {
		t.Errorf("layer %v, want only an executable /pause", a.layer)
	}
}

func TestBusybox(t *testing.T) {
	if _, err := os.Stat(DefaultBusybox); err != nil {
		t.Skipf("no busybox at %s", DefaultBusybox)
	}
	img, err := Busybox("")
	if err != nil {
		t.Fatal(err)
	}
	a := readArchive(t, img)
	byName := map[string]*tar.Header{}
	for _, h := range a.layer {
		byName["/"+strings.TrimSuffix(h.Name, "/")] = h
	}
	applets := strings.Fields("sh ash sleep echo cat ls env id kill ps top mkdir rm touch wget nc httpd hostname ip ifconfig nslookup head tail grep sed awk dd date true false test [ tee printf wc mount df du find xargs seq uname vi stat sync yes timeout nohup chmod chown ln cp mv pwd basename dirname")
	for _, name := range applets {
		found := false
		for _, dir := range []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/"} {
			if h, ok := byName[dir+name]; ok {
				found = true
				if name == "nohup" && h.Typeflag == tar.TypeReg {
					continue // a script where busybox lacks the applet
				}
				if h.Typeflag != tar.TypeSymlink || h.Linkname != "/bin/busybox" {
					t.Errorf("%s%s: type %c -> %q, want a symlink to /bin/busybox", dir, name, h.Typeflag, h.Linkname)
				}
			}
		}
		if !found {
			t.Errorf("applet %s has no link", name)
		}
	}
	if h := byName["/bin/busybox"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode != 0o755 {
		t.Errorf("/bin/busybox: %+v, want an executable file", h)
	}
	if h := byName["/tmp"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want mode 1777", h)
	}
	for _, p := range []string{"/root", "/var/www/index.html"} {
		if byName[p] == nil {
			t.Errorf("%s missing", p)
		}
	}
	if !strings.Contains(string(a.content["etc/passwd"]), "nobody:x:65534:65534:") || !strings.Contains(string(a.content["etc/group"]), "nobody:x:65534:") {
		t.Errorf("passwd/group lack nobody: %q %q", a.content["etc/passwd"], a.content["etc/group"])
	}
	c := a.config.Config
	if !slices.Equal(c.Env, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}) || !slices.Equal(c.Cmd, []string{"sh"}) {
		t.Errorf("config %+v", c)
	}
}

func TestAppletLinks(t *testing.T) {
	links, err := appletLinks([]byte("linuxrc\nbin/sh\nusr/bin/wget\nbin/sh\nbin/busybox\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links {
		got = append(got, l.Path+"->"+l.Target)
	}
	if want := []string{"/bin/sh->/bin/busybox", "/usr/bin/wget->/bin/busybox"}; !slices.Equal(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
	if _, err := appletLinks([]byte("\n")); err == nil {
		t.Error("an empty applet list gave no error")
	}
}

func TestFromDir(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "usr/bin"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "usr/bin/tool"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Chmod(filepath.Join(dir, "usr/bin/tool"), 0o755|fs.ModeSetuid))
	must(os.Symlink("usr/bin", filepath.Join(dir, "bin")))
	must(os.Mkdir(filepath.Join(dir, "tmp"), 0o777))
	must(os.Chmod(filepath.Join(dir, "tmp"), 0o777|fs.ModeSticky))

	entries, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range entries {
		got[e.Path] = e
	}
	if e := got["/usr/bin/tool"]; e.Kind != File || string(e.Content) != "#!/bin/sh\n" || e.Mode != 0o755|fs.ModeSetuid {
		t.Errorf("/usr/bin/tool = %+v, want a setuid file with its content", e)
	}
	if e := got["/bin"]; e.Kind != Symlink || e.Target != "usr/bin" {
		t.Errorf("/bin = %+v, want a symlink to usr/bin", e)
	}
	if e := got["/tmp"]; e.Kind != Dir || e.Mode != 0o777|fs.ModeSticky {
		t.Errorf("/tmp = %+v, want a sticky directory", e)
	}
	if _, err := (Image{Ref: "example.com/x:1", Entries: entries}).Build(); err != nil {
		t.Fatalf("the entries do not build: %v", err)
	}

	// A fifo cannot be put into a layer: refused, with its path.
	must(syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	if _, err := FromDir(dir); err == nil || !strings.Contains(err.Error(), "pipe") {
		t.Errorf("FromDir with a fifo: err = %v, want an error naming it", err)
	}
}
