package apiserver

import (
	"encoding/base64"
	"net/http/httptest"
	"testing"
)

func TestWebsocketBearer(t *testing.T) {
	enc := func(s string) string { return bearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name          string
		websocket     bool
		protocols     []string
		authorization string
		wantErr       bool
		wantAuth      string
		wantProtocols string
	}{
		{name: "token and channel protocol", websocket: true, protocols: []string{"v5.channel.k8s.io, " + enc("tok-1")},
			wantAuth: "Bearer tok-1", wantProtocols: "v5.channel.k8s.io"},
		{name: "token in its own header value", websocket: true, protocols: []string{"v5.channel.k8s.io", enc("tok-2"), "v4.channel.k8s.io"},
			wantAuth: "Bearer tok-2", wantProtocols: "v5.channel.k8s.io,v4.channel.k8s.io"},
		{name: "token alone", websocket: true, protocols: []string{enc("tok-3")}, wantAuth: "Bearer tok-3"},
		{name: "no token", websocket: true, protocols: []string{"v5.channel.k8s.io"}, wantProtocols: "v5.channel.k8s.io"},
		{name: "header wins", websocket: true, protocols: []string{enc("tok-4")}, authorization: "Bearer header", wantAuth: "Bearer header"},
		{name: "not a websocket", protocols: []string{enc("tok-5")}, wantProtocols: enc("tok-5")},
		{name: "bad encoding", websocket: true, protocols: []string{bearerProtocolPrefix + "!!"}, wantErr: true},
		{name: "empty token", websocket: true, protocols: []string{bearerProtocolPrefix}, wantErr: true},
		{name: "two tokens", websocket: true, protocols: []string{enc("a") + "," + enc("b")}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/namespaces/ns/pods/p/exec", nil)
			if tc.websocket {
				r.Header.Set("Connection", "Upgrade")
				r.Header.Set("Upgrade", "websocket")
			}
			for _, p := range tc.protocols {
				r.Header.Add("Sec-WebSocket-Protocol", p)
			}
			if tc.authorization != "" {
				r.Header.Set("Authorization", tc.authorization)
			}
			err := websocketBearer(r)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if got := r.Header.Get("Authorization"); got != tc.wantAuth {
				t.Errorf("Authorization %q, want %q", got, tc.wantAuth)
			}
			if got := r.Header.Get("Sec-WebSocket-Protocol"); got != tc.wantProtocols {
				t.Errorf("Sec-WebSocket-Protocol %q, want %q", got, tc.wantProtocols)
			}
		})
	}
}
