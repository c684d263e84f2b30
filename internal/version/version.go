// Package version tells which Orca this is and which Kubernetes API it
// speaks.
package version

import (
	"fmt"
	"runtime"

	apiversion "k8s.io/apimachinery/pkg/version"
)

// Set at build time with -ldflags "-X ...".
var (
	// Orca is Orca's own version.
	Orca = "v0.1.0-dev"
	// GitCommit is the commit the binary was built from.
	GitCommit = ""
	// BuildDate is when the binary was built (RFC 3339).
	BuildDate = "1970-01-01T00:00:00Z"
)

// Kubernetes API version served, matching the k8s.io modules Orca is built
// with, so that kubectl's version-skew checks see a supported server.
const (
	kubeMajor = "1"
	kubeMinor = "37"
	kubePatch = "2"
)

// KubernetesGitVersion is the version reported on /version.
func KubernetesGitVersion() string {
	return fmt.Sprintf("v%s.%s.%s+orca", kubeMajor, kubeMinor, kubePatch)
}

// Info is the /version document.
func Info() apiversion.Info {
	return apiversion.Info{
		Major:        kubeMajor,
		Minor:        kubeMinor,
		GitVersion:   KubernetesGitVersion(),
		GitCommit:    GitCommit,
		GitTreeState: "clean",
		BuildDate:    BuildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
}
