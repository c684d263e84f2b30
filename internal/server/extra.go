package server

import (
	"fmt"
	"net/http"

	"github.com/orca-project/orca/internal/apiserver/openapi"
	"github.com/orca-project/orca/internal/registry/builtin"
	"github.com/orca-project/orca/internal/version"
)

// extraHandlers mounts the documents served beside the REST API; the
// returned service is to be told of custom resources.
func extraHandlers() (map[string]http.Handler, *openapi.Service, error) {
	svc, err := openapi.New(builtin.Resources(), version.KubernetesGitVersion())
	if err != nil {
		return nil, nil, fmt.Errorf("openapi: %w", err)
	}
	mux := http.NewServeMux()
	svc.RegisterRoutes(mux)
	return map[string]http.Handler{"/openapi": mux}, svc, nil
}
