package encryption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The server's endpoints for `orca secrets-encrypt`, beside the REST API
// as k3s's /v1-k3s/encrypt/... are beside its supervisor's.
const (
	PathPrefix = "/v1-orca/secrets-encrypt"
	StatusPath = PathPrefix + "/status" // GET
	RotatePath = PathPrefix + "/rotate" // POST
)

// Client calls a running server's endpoints.
type Client struct {
	http *http.Client
	host string
}

// NewClient returns a client for the server at host (https://...) whose
// HTTP client carries an administrator's credentials.
func NewClient(hc *http.Client, host string) *Client {
	return &Client{http: hc, host: strings.TrimSuffix(host, "/")}
}

// Status reports encryption at rest.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	return c.call(ctx, http.MethodGet, StatusPath)
}

// Rotate rotates the server's keys and reports the result; it returns when
// the rotation is complete.
func (c *Client) Rotate(ctx context.Context) (*Status, error) {
	return c.call(ctx, http.MethodPost, RotatePath)
}

func (c *Client) call(ctx context.Context, method, path string) (*Status, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(body)))
	}
	var st Status
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return &st, nil
}

// Handler serves the endpoints for m. allowed decides who may call them:
// key administration is for cluster administrators only.
func Handler(m *Manager, allowed func(*http.Request) bool) http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, st *Status, err error) {
		switch {
		case errors.Is(err, ErrRotating), errors.Is(err, ErrNotGenerated), errors.Is(err, ErrNotEncrypted):
			http.Error(w, err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(st)
		}
	}
	mux.HandleFunc("GET "+StatusPath, func(w http.ResponseWriter, r *http.Request) {
		st, err := m.Status(r.Context())
		reply(w, st, err)
	})
	mux.HandleFunc("POST "+RotatePath, func(w http.ResponseWriter, r *http.Request) {
		// The rotation outlives a client that gives up: stopping half-way
		// is safe, but finishing leaves no old key behind.
		st, err := m.Rotate(context.WithoutCancel(r.Context()))
		reply(w, st, err)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed(r) {
			http.Error(w, "forbidden: secrets encryption is administered by system:masters", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
