package server

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"

	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/storage/encryption"
)

// atRest is the server's encryption at rest.
type atRest struct {
	cfg          *apiserverconfig.EncryptionConfiguration
	transformers *encryption.Transformers
	// path is the generated configuration, empty when the operator's
	// file is used; source is the file read either way.
	path, source string
}

// loadEncryption reads the operator's EncryptionConfiguration
// (--encryption-provider-config) or else the server's own, generated at
// first start in the TLS directory and kept. It runs before etcd starts,
// so that an invalid file stops the server before it touches any data.
func loadEncryption(opts Options, tlsDir string) (*atRest, error) {
	e := &atRest{source: opts.EncryptionProviderConfig}
	var err error
	if e.source != "" {
		e.cfg, err = encryption.Load(e.source)
	} else {
		e.path = filepath.Join(tlsDir, encryption.GeneratedFile)
		e.source = e.path
		e.cfg, err = encryption.LoadOrGenerate(e.path, time.Now())
	}
	if err != nil {
		return nil, err
	}
	if e.transformers, err = encryption.New(e.cfg); err != nil {
		return nil, fmt.Errorf("encryption provider config %s: %w", e.source, err)
	}
	return e, nil
}

// encryptionHandler serves `orca secrets-encrypt` to cluster
// administrators (system:masters, as the admin kubeconfig's certificate):
// keys are not for every authenticated user, whatever the authorizer
// allows.
func encryptionHandler(m *encryption.Manager) http.Handler {
	return encryption.Handler(m, func(r *http.Request) bool {
		u, ok := apiserver.UserFrom(r.Context())
		return ok && slices.Contains(u.Groups, "system:masters")
	})
}

// storedResources lists, when called, what the API server stores where.
// The manager is built before the API server and calls it on requests
// only, once the server exists.
func storedResources(api **apiserver.Server) func() []encryption.Resource {
	return func() []encryption.Resource {
		var out []encryption.Resource
		for _, r := range (*api).StoredResources() {
			out = append(out, encryption.Resource{GroupResource: r.GroupResource, Prefix: r.Prefix})
		}
		return out
	}
}
