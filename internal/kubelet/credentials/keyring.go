// Package credentials turns a pod's image pull secrets into the registry
// credentials an image is pulled with, as upstream's kubelet keyring does:
// entries of kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg
// secrets are keyed by registry host (globs allowed, a path prefix
// optional), an image gets every entry that matches it, most specific
// first, and Docker Hub's entry serves images without a registry host.
package credentials

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// defaultRegistryHost is Docker Hub's key in docker configurations.
const defaultRegistryHost = "index.docker.io"

// entry is one registry's credentials in a docker configuration; auth,
// when set, is base64 "user:password" and wins over the separate fields.
type entry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

func (e entry) credentials() (user, password string) {
	if e.Auth != "" {
		if raw, err := base64.StdEncoding.DecodeString(e.Auth); err == nil {
			if u, p, ok := strings.Cut(string(raw), ":"); ok {
				return u, p
			}
		}
	}
	return e.Username, e.Password
}

// Keyring holds registry credentials by key (host, host with a path, or
// a host glob).
type Keyring struct {
	index []string
	creds map[string][]*runtimeapi.AuthConfig
}

// FromSecrets builds the keyring of a pod's pull secrets, in their order.
// Secrets of other types, and malformed ones, add nothing, as upstream.
func FromSecrets(secrets []*v1.Secret) *Keyring {
	k := &Keyring{creds: map[string][]*runtimeapi.AuthConfig{}}
	for _, s := range secrets {
		switch s.Type {
		case v1.SecretTypeDockerConfigJson:
			var cfg struct {
				Auths map[string]entry `json:"auths"`
			}
			if json.Unmarshal(s.Data[v1.DockerConfigJsonKey], &cfg) == nil {
				k.add(cfg.Auths)
			}
		case v1.SecretTypeDockercfg:
			var cfg map[string]entry
			if json.Unmarshal(s.Data[v1.DockerConfigKey], &cfg) == nil {
				k.add(cfg)
			}
		}
	}
	k.index = dedupe(k.index)
	// Reverse lexical order puts longer keys of a host (with a path)
	// before the host alone.
	sort.Sort(sort.Reverse(sort.StringSlice(k.index)))
	return k
}

// add files each entry under its key: the location without its scheme,
// and without the /v1/ or /v2/ that docker configurations may carry.
func (k *Keyring) add(cfg map[string]entry) {
	locs := make([]string, 0, len(cfg))
	for loc := range cfg {
		locs = append(locs, loc)
	}
	sort.Strings(locs)
	for _, loc := range locs {
		value := loc
		if !strings.HasPrefix(value, "https://") && !strings.HasPrefix(value, "http://") {
			value = "https://" + value
		}
		u, err := url.Parse(value)
		if err != nil || u.Host == "" {
			continue
		}
		path := u.Path
		if strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") {
			path = path[3:]
		}
		key := u.Host
		if path != "" && path != "/" {
			key += path
		}
		user, password := cfg[loc].credentials()
		k.creds[key] = append(k.creds[key], &runtimeapi.AuthConfig{Username: user, Password: password})
		k.index = append(k.index, key)
	}
}

// Lookup returns the credentials for an image, best match first; none
// means the image is pulled anonymously.
func (k *Keyring) Lookup(image string) []*runtimeapi.AuthConfig {
	repo := repository(image)
	var out []*runtimeapi.AuthConfig
	for _, key := range k.index {
		if matches(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDefaultRegistry(repo) {
		out = k.creds[defaultRegistryHost]
	}
	return out
}

// repository is the image's repository with its registry host, as the
// runtime resolves it: busybox is docker.io/library/busybox.
func repository(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return named.Name()
}

// isDefaultRegistry reports an image on Docker Hub.
func isDefaultRegistry(repo string) bool {
	host, _, found := strings.Cut(repo, "/")
	if host == "" {
		return false
	}
	if !found || host == "docker.io" || host == "index.docker.io" {
		return true
	}
	return !strings.ContainsAny(host, ".:") && host != "localhost"
}

// matches reports whether a key covers a repository: the same number of
// host labels, each matching the key's glob, the same port, and the key's
// path (if any) a prefix of the repository's.
func matches(key, repo string) bool {
	k, err1 := url.Parse("https://" + key)
	r, err2 := url.Parse("https://" + repo)
	if err1 != nil || err2 != nil {
		return false
	}
	kl, rl := strings.Split(k.Hostname(), "."), strings.Split(r.Hostname(), ".")
	if len(kl) != len(rl) {
		return false
	}
	for i := range kl {
		if ok, err := filepath.Match(kl[i], rl[i]); err != nil || !ok {
			return false
		}
	}
	if k.Port() != r.Port() {
		return false
	}
	return strings.HasPrefix(r.Path, k.Path)
}

func dedupe(keys []string) []string {
	seen := map[string]bool{}
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
