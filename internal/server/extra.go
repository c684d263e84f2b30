package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/orca-project/orca/internal/apiserver/openapi"
	"github.com/orca-project/orca/internal/console"
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

// publicHandlers mounts what is served before authentication: the web
// console's files, unless it is turned off.
func publicHandlers(opts Options) (map[string]http.Handler, error) {
	if opts.DisableConsole {
		return nil, nil
	}
	ui, err := console.New()
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	return map[string]http.Handler{strings.TrimSuffix(console.Prefix, "/"): ui}, nil
}
