package imagebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// References of the images Orca builds for itself. "localhost/" keeps them
// from ever being looked up on a public registry.
const (
	PauseRef   = "localhost/orca/pause:1.0"
	BusyboxRef = "localhost/orca/busybox:1.35"
)

// PauseBinaryName is the file name of the pause program (cmd/orca-pause).
const PauseBinaryName = "orca-pause"

// Pause is the pod sandbox image: the pause binary at /pause and nothing else.
func Pause(binary []byte) Image {
	return Image{
		Ref:     PauseRef,
		Entries: []Entry{FileEntry("/pause", 0o755, binary)},
		Config:  Config{Entrypoint: []string{"/pause"}, User: "65535:65535"},
	}
}

// FindPauseBinary looks for orca-pause next to the running executable (where
// `make build` puts it), then in $PATH.
func FindPauseBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), PauseBinaryName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath(PauseBinaryName)
	if err != nil {
		return "", fmt.Errorf("%s not found next to the orca executable nor in $PATH (run make build): %w", PauseBinaryName, err)
	}
	return p, nil
}

// DefaultBusybox is where Debian's busybox-static installs its binary.
const DefaultBusybox = "/bin/busybox"

// Busybox is a small test image: a static busybox at /bin/busybox with a
// symlink per applet, root and nobody users, /tmp, /root and /var/www with
// an index.html for `httpd -h /var/www`. The binary at busyboxPath must be
// statically linked: the image has no libc.
func Busybox(busyboxPath string) (Image, error) {
	if busyboxPath == "" {
		busyboxPath = DefaultBusybox
	}
	bin, err := os.ReadFile(busyboxPath)
	if err != nil {
		return Image{}, fmt.Errorf("reading busybox: %w", err)
	}
	out, err := exec.Command(busyboxPath, "--list-full").Output()
	if err != nil {
		return Image{}, fmt.Errorf("listing applets of %s: %w", busyboxPath, err)
	}
	entries := []Entry{
		FileEntry("/bin/busybox", 0o755, bin),
		FileEntry("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")),
		FileEntry("/etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\n")),
		FileEntry("/etc/hosts", 0o644, []byte("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		DirEntry("/root", 0o700),
		DirEntry("/usr/sbin", 0o755),
		FileEntry("/var/www/index.html", 0o644, []byte("<html><body><h1>It works!</h1><p>served by orca's busybox image</p></body></html>\n")),
	}
	links, err := appletLinks(out)
	if err != nil {
		return Image{}, fmt.Errorf("applets of %s: %w", busyboxPath, err)
	}
	entries = append(entries, links...)
	if !hasApplet(links, "nohup") {
		entries = append(entries, FileEntry("/usr/bin/nohup", 0o755, []byte(nohupScript)))
	}
	return Image{
		Ref:     BusyboxRef,
		Entries: entries,
		Config: Config{
			Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
			Cmd: []string{"sh"},
		},
	}, nil
}

// nohupScript stands in for the nohup applet, which Debian's busybox-static
// leaves out: an ignored signal stays ignored across exec.
const nohupScript = `#!/bin/sh
if [ $# -eq 0 ]; then echo "usage: nohup COMMAND [ARG]..." >&2; exit 127; fi
trap '' HUP
exec "$@"
`

func hasApplet(links []Entry, name string) bool {
	for _, l := range links {
		if path.Base(l.Path) == name {
			return true
		}
	}
	return false
}

// appletLinks turns the output of `busybox --list-full` ("usr/bin/wget" per
// line) into symlinks to /bin/busybox. Busybox finds the applet from the
// name it was started as, so a link is all an applet needs.
func appletLinks(list []byte) ([]Entry, error) {
	var links []Entry
	seen := map[string]bool{"/bin/busybox": true}
	for _, line := range strings.Split(string(bytes.TrimSpace(list)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		p := path.Clean("/" + line)
		if strings.Contains(line, "..") {
			return nil, fmt.Errorf("unexpected applet path %q", line)
		}
		// linuxrc, at the root, is an initrd's init; a container needs no such thing.
		if path.Dir(p) == "/" || seen[p] {
			continue
		}
		seen[p] = true
		links = append(links, SymlinkEntry(p, "/bin/busybox"))
	}
	if len(links) == 0 {
		return nil, errors.New("no applets listed")
	}
	return links, nil
}
