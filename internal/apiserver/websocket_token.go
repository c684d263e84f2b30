package apiserver

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// bearerProtocolPrefix marks a bearer token carried as a WebSocket
// subprotocol. Browsers cannot set headers on a WebSocket, so upstream's
// API server also takes the token from Sec-WebSocket-Protocol, base64url
// encoded without padding after this prefix; the web console's shell
// depends on it.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// websocketBearer moves a token offered as a WebSocket subprotocol into
// the request's Authorization header, where the token authenticators
// look, and takes the subprotocol out so it is neither chosen nor passed
// on to a kubelet. A request that also has an Authorization header keeps
// that one. A malformed token is an error, as upstream.
func websocketBearer(r *http.Request) error {
	if !wsstream.IsWebSocketRequest(r) {
		return nil
	}
	var token string
	var rest []string
	for _, p := range websocketProtocols(r) {
		encoded, ok := strings.CutPrefix(p, bearerProtocolPrefix)
		if !ok {
			rest = append(rest, p)
			continue
		}
		if token != "" {
			return errors.New("more than one bearer token subprotocol")
		}
		b, err := base64.RawURLEncoding.DecodeString(encoded)
		if err != nil {
			return errors.New("invalid base64.bearer.authorization token encoding")
		}
		if len(b) == 0 {
			return errors.New("invalid bearer token")
		}
		token = string(b)
	}
	if token == "" {
		return nil
	}
	if len(rest) == 0 {
		r.Header.Del("Sec-WebSocket-Protocol")
	} else {
		r.Header.Set("Sec-WebSocket-Protocol", strings.Join(rest, ","))
	}
	if r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return nil
}
