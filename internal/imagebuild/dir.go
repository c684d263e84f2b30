package imagebuild

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// FromDir returns the entries of a directory tree as they would appear at
// the root of an image: regular files with their content and permission
// bits (setuid, setgid and sticky included), directories and symlinks,
// owners as on disk. Anything else (devices, sockets, fifos) is an error,
// since a layer built here could not reproduce it. Hard links become
// separate copies.
func FromDir(dir string) ([]Entry, error) {
	var entries []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Path: path.Join("/", filepath.ToSlash(rel)), Mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			e.UID, e.GID = int(st.Uid), int(st.Gid)
		}
		switch {
		case info.Mode().IsDir():
			e.Kind = Dir
		case info.Mode().IsRegular():
			e.Kind = File
			if e.Content, err = os.ReadFile(p); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			e.Kind, e.Mode = Symlink, 0o777
			if e.Target, err = os.Readlink(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: %s files cannot go into an image", p, info.Mode().Type())
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return entries, nil
}
