package server

import (
	"log/slog"
	"net/http"
)

// extraHandlers mounts the documents served beside the REST API.
func extraHandlers(log *slog.Logger) map[string]http.Handler {
	return map[string]http.Handler{}
}
