package server

import (
	"fmt"
	"net/http"

	"github.com/orca-project/orca/internal/apiserver/openapi"
	"github.com/orca-project/orca/internal/registry/builtin"
	"github.com/orca-project/orca/internal/version"
)

// extraHandlers mounts the documents served beside the REST API.
func extraHandlers() (map[string]http.Handler, error) {
	svc, err := openapi.New(builtin.Resources(), version.KubernetesGitVersion())
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	mux := http.NewServeMux()
	svc.RegisterRoutes(mux)
	return map[string]http.Handler{"/openapi": mux}, nil
}
