// Package install puts the running orca binary on a machine as a systemd
// service, and takes off again exactly what it put there, as k3s's install
// and uninstall scripts do. What it wrote is recorded in a manifest
// (ManifestPath), which survives the data directory and is the only thing
// uninstall goes by: a kubectl or a unit it did not write stays.
//
// Every path is taken under a root directory ("" or "/" for the machine
// itself), so that tests install into a temporary directory. The unit
// text (Unit) is a pure function; starting and stopping units is the
// caller's, through systemctl.
package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// ManifestPath is where install records what it wrote: outside the data
// directory, which uninstall removes, and which a unit's flags may move.
const ManifestPath = "/etc/orca/install-manifest.json"

// Manifest is what install wrote. Paths are the machine's, without the
// root prefix.
type Manifest struct {
	Units []InstalledUnit `json:"units,omitempty"`
	// Files are copies of binaries.
	Files []string `json:"files,omitempty"`
	// Links are symbolic links to the binary (kubectl).
	Links []string `json:"links,omitempty"`
}

// InstalledUnit is a systemd unit install wrote.
type InstalledUnit struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// DataDir is the data directory of the service the unit runs.
	DataDir string `json:"dataDir"`
}

func (m *Manifest) addUnit(u InstalledUnit) {
	m.Units = slices.DeleteFunc(m.Units, func(x InstalledUnit) bool { return x.Path == u.Path })
	m.Units = append(m.Units, u)
}

func addPath(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// DataDirs are the data directories of the installed units, each once.
func (m Manifest) DataDirs() []string {
	var out []string
	for _, u := range m.Units {
		out = addPath(out, u.DataDir)
	}
	return out
}

// Empty reports whether nothing is recorded.
func (m Manifest) Empty() bool { return len(m.Units)+len(m.Files)+len(m.Links) == 0 }

// ReadManifest reads the manifest under root; none is an empty one.
func ReadManifest(root string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(under(root, ManifestPath))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("install: read manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("install: parse manifest %s: %w", ManifestPath, err)
	}
	return m, nil
}

func writeManifest(root string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(under(root, ManifestPath), append(b, '\n'), 0o644)
}

// under is path p on the machine whose root directory is root.
func under(root, p string) string {
	if root == "" {
		return p
	}
	return filepath.Join(root, p)
}

// Options says what to install.
type Options struct {
	// Root is prefixed to every path ("" for the machine itself).
	Root string
	// Role is "server" or "agent"; Flags follow it on the unit's command
	// line.
	Role  string
	Flags []string
	// BinDir receives orca (and orca-pause, and the kubectl link);
	// SystemdDir the unit.
	BinDir, SystemdDir string
	// Executable is the binary to install: the running one.
	Executable string
	Out        io.Writer
}

// Result is what Install put in place.
type Result struct {
	Unit    InstalledUnit
	Binary  string
	Written []string
}

// Install copies the binary (and orca-pause beside it, when there is
// one), links kubectl to it unless a kubectl is there already, writes the
// role's unit and records all of it in the manifest, keeping what an
// earlier install recorded.
func Install(o Options) (Result, error) {
	var res Result
	if !slices.Contains(Roles, o.Role) {
		return res, fmt.Errorf("install: unknown role %q (want server or agent)", o.Role)
	}
	if !filepath.IsAbs(o.BinDir) || !filepath.IsAbs(o.SystemdDir) {
		return res, fmt.Errorf("install: --bin-dir and --systemd-dir must be absolute paths")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	m, err := ReadManifest(o.Root)
	if err != nil {
		return res, err
	}
	exe, err := filepath.EvalSymlinks(o.Executable)
	if err != nil {
		return res, fmt.Errorf("install: the running executable: %w", err)
	}
	res.Binary = filepath.Join(o.BinDir, "orca")
	copies := [][2]string{{exe, res.Binary}}
	pause := filepath.Join(filepath.Dir(exe), "orca-pause")
	if st, err := os.Stat(pause); err == nil && st.Mode().IsRegular() {
		copies = append(copies, [2]string{pause, filepath.Join(o.BinDir, "orca-pause")})
	}
	for _, c := range copies {
		wrote, err := copyFile(c[0], under(o.Root, c[1]))
		if err != nil {
			return res, err
		}
		if wrote {
			m.Files = addPath(m.Files, c[1])
			res.Written = append(res.Written, c[1])
			fmt.Fprintf(o.Out, "installed %s\n", c[1])
		} else {
			fmt.Fprintf(o.Out, "%s is already the running binary\n", c[1])
		}
	}

	kubectl := filepath.Join(o.BinDir, "kubectl")
	switch linked, err := linkKubectl(under(o.Root, kubectl)); {
	case err != nil:
		return res, err
	case linked:
		m.Links = addPath(m.Links, kubectl)
		res.Written = append(res.Written, kubectl)
		fmt.Fprintf(o.Out, "linked %s to orca\n", kubectl)
	default:
		fmt.Fprintf(o.Out, "%s exists and is not orca's: left alone\n", kubectl)
	}

	res.Unit = InstalledUnit{Name: UnitName(o.Role), Path: filepath.Join(o.SystemdDir, UnitName(o.Role)), DataDir: DataDir(o.Flags)}
	if err := writeFile(under(o.Root, res.Unit.Path), []byte(Unit(o.Role, res.Binary, o.Flags)), 0o644); err != nil {
		return res, err
	}
	m.addUnit(res.Unit)
	res.Written = append(res.Written, res.Unit.Path)
	fmt.Fprintf(o.Out, "wrote %s\n", res.Unit.Path)
	if err := writeManifest(o.Root, m); err != nil {
		return res, err
	}
	return res, nil
}

// copyFile puts src at dst through a temporary file and a rename, so that
// a running orca at dst keeps its old file and a reader never sees half
// of the new one. Copying a file onto itself writes nothing.
func copyFile(src, dst string) (bool, error) {
	if a, err := os.Stat(src); err == nil {
		if b, err := os.Stat(dst); err == nil && os.SameFile(a, b) {
			return false, nil
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return false, fmt.Errorf("install: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, fmt.Errorf("install: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return false, fmt.Errorf("install: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return false, fmt.Errorf("install: copy %s to %s: %w", src, dst, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return false, fmt.Errorf("install: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("install: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return false, fmt.Errorf("install: %w", err)
	}
	return true, nil
}

// linkKubectl makes path a link to orca, unless something else is there:
// a real kubectl stays, as k3s leaves one.
func linkKubectl(path string) (bool, error) {
	if target, err := os.Readlink(path); err == nil {
		return target == "orca" || filepath.Base(target) == "orca", nil
	}
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	}
	if err := os.Symlink("orca", path); err != nil {
		return false, fmt.Errorf("install: link kubectl: %w", err)
	}
	return true, nil
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("install: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// RemoveFiles removes the units, binaries and links of the manifest and
// the manifest itself (and its directory, once empty). A link is removed
// only while it still is a link. It returns the paths removed.
func RemoveFiles(root string, m Manifest) ([]string, error) {
	var removed []string
	var errs []error
	rm := func(p string) {
		err := os.Remove(under(root, p))
		switch {
		case err == nil:
			removed = append(removed, p)
		case !errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("install: %w", err))
		}
	}
	for _, u := range m.Units {
		rm(u.Path)
	}
	for _, f := range m.Files {
		rm(f)
	}
	for _, l := range m.Links {
		if st, err := os.Lstat(under(root, l)); err == nil && st.Mode()&os.ModeSymlink != 0 {
			rm(l)
		}
	}
	if len(errs) > 0 {
		// The manifest stays while it still names something.
		return removed, errors.Join(errs...)
	}
	rm(ManifestPath)
	_ = os.Remove(under(root, filepath.Dir(ManifestPath)))
	return removed, nil
}
