// Package atomicdir publishes a set of files into a directory so that a
// reader never sees half of an update, as upstream's AtomicWriter does for
// configMap, secret, downwardAPI and projected volumes.
//
// Layout of a published directory:
//
//	..2026_11_22_05_31_13.123456789/  the files of one version
//	..data -> ..2026_11_22_05_31_13.123456789
//	key    -> ..data/key              one symlink per top-level name
//
// An update writes a new timestamped directory and swaps ..data with one
// rename(2). The version before is kept until the next update, so a reader
// that resolved ..data just before a swap still reads a complete version.
package atomicdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	dataLink    = "..data"
	dataTmpLink = "..data_tmp"

	maxFileNameLength = 255
	maxPathLength     = 4096
)

// File is one file of a payload. Mode holds permission bits only.
type File struct {
	Data []byte
	Mode fs.FileMode
}

// Options tune how files are written.
type Options struct {
	// FSGroup, when set, becomes the group of every file and directory, and
	// files gain group read as upstream's volume ownership does.
	FSGroup *int64
	// Now stamps the version directory's name; time.Now when nil.
	Now func() time.Time
}

// ValidatePath reports whether p may name a file in a payload: relative,
// no '..' element, not starting with '..', within length limits. The
// messages are upstream's.
func ValidatePath(p string) error {
	if p == "" {
		return fmt.Errorf("invalid path: must not be empty: %q", p)
	}
	if path.IsAbs(p) {
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	}
	if len(p) > maxPathLength {
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	items := strings.Split(p, "/")
	for _, item := range items {
		if item == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(item) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	// Names starting with ".." are the writer's own.
	if strings.HasPrefix(items[0], "..") && len(items[0]) > 2 {
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	return nil
}

// Write publishes payload (relative path → file) in dir, which must exist.
// It returns whether anything changed: a payload equal to the published
// version (contents, modes, group) writes nothing.
func Write(dir string, payload map[string]File, opts Options) (bool, error) {
	clean := make(map[string]File, len(payload))
	for p, f := range payload {
		if err := ValidatePath(p); err != nil {
			return false, err
		}
		f.Mode = finalMode(f.Mode, opts.FSGroup)
		clean[filepath.Clean(p)] = f
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}

	oldVersion, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", dataLink, err)
	}
	if oldVersion != "" {
		same, err := matches(filepath.Join(dir, oldVersion), clean, opts.FSGroup)
		if err != nil {
			return false, err
		}
		if same {
			// Repair user-visible links a crash may have left missing.
			return false, linkUserVisible(dir, clean)
		}
	}

	version, err := os.MkdirTemp(dir, now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, fmt.Errorf("create version directory: %w", err)
	}
	if err := writeVersion(version, clean, opts.FSGroup); err != nil {
		_ = os.RemoveAll(version)
		return false, err
	}
	tmp := filepath.Join(dir, dataTmpLink)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		return false, fmt.Errorf("link new version: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		return false, fmt.Errorf("swap %s: %w", dataLink, err)
	}
	if err := linkUserVisible(dir, clean); err != nil {
		return true, err
	}
	return true, removeOldVersions(dir, filepath.Base(version), oldVersion)
}

func finalMode(m fs.FileMode, fsGroup *int64) fs.FileMode {
	m &= fs.ModePerm
	if fsGroup != nil {
		m |= 0o440
	}
	return m
}

// matches reports whether the version directory holds exactly payload.
func matches(version string, payload map[string]File, fsGroup *int64) (bool, error) {
	seen := 0
	err := filepath.WalkDir(version, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(version, p)
		want, ok := payload[rel]
		if !ok || !d.Type().IsRegular() {
			return errDiffers
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != want.Mode || (fsGroup != nil && gid(info) != *fsGroup) {
			return errDiffers
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, want.Data) {
			return errDiffers
		}
		seen++
		return nil
	})
	switch {
	case errors.Is(err, errDiffers), errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("compare with published version: %w", err)
	}
	return seen == len(payload), nil
}

var errDiffers = errors.New("differs")

func gid(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Gid)
	}
	return -1
}

func writeVersion(version string, payload map[string]File, fsGroup *int64) error {
	// 0755 lets group and others traverse whatever the umask was.
	if err := setOwnership(version, 0o755, fsGroup, true); err != nil {
		return err
	}
	for rel, f := range payload {
		full := filepath.Join(version, rel)
		if err := mkdirs(version, filepath.Dir(rel), fsGroup); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.Data, f.Mode); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
		if err := setOwnership(full, f.Mode, fsGroup, false); err != nil {
			return err
		}
	}
	return nil
}

func mkdirs(root, rel string, fsGroup *int64) error {
	if rel == "." {
		return nil
	}
	if err := mkdirs(root, filepath.Dir(rel), fsGroup); err != nil {
		return err
	}
	full := filepath.Join(root, rel)
	if err := os.Mkdir(full, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("create directory %s: %w", rel, err)
	}
	return setOwnership(full, 0o755, fsGroup, true)
}

// setOwnership applies mode regardless of umask and, with an fsGroup, the
// group (and set-gid on directories, so new files inherit it).
func setOwnership(p string, mode fs.FileMode, fsGroup *int64, dir bool) error {
	if fsGroup != nil {
		if err := os.Lchown(p, -1, int(*fsGroup)); err != nil {
			return fmt.Errorf("set group of %s: %w", p, err)
		}
		if dir {
			mode |= fs.ModeSetgid
		}
	}
	if err := os.Chmod(p, mode); err != nil {
		return fmt.Errorf("set mode of %s: %w", p, err)
	}
	return nil
}

// linkUserVisible points one symlink per top-level payload name through
// ..data and removes links of names the payload no longer has.
func linkUserVisible(dir string, payload map[string]File) error {
	top := map[string]bool{}
	for rel := range payload {
		top[strings.SplitN(rel, "/", 2)[0]] = true
	}
	for name := range top {
		link := filepath.Join(dir, name)
		target := filepath.Join(dataLink, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		if err := os.RemoveAll(link); err != nil {
			return err
		}
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || top[name] || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if cur, err := os.Readlink(filepath.Join(dir, name)); err == nil && strings.HasPrefix(cur, dataLink+"/") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeOldVersions deletes every version directory except the current one
// and the one it replaced.
func removeOldVersions(dir, current, previous string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "..") || name == current || name == previous {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
