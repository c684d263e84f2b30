// Command echo is the end-to-end tests' HTTP backend: it answers every
// request with what it received (as JSON: the pod that answered, the
// method, host, path and headers), and echoes WebSocket messages on /ws.
// It listens on $PORT (8080 when unset) and names itself by $POD_NAME.
package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/net/websocket"
)

// Answer is what the server says of a request.
type Answer struct {
	Pod     string              `json:"pod"`
	Method  string              `json:"method"`
	Proto   string              `json:"proto"`
	Host    string              `json:"host"`
	Path    string              `json:"path"`
	Remote  string              `json:"remote"`
	Headers map[string][]string `json:"headers"`
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	pod := os.Getenv("POD_NAME")
	mux := http.NewServeMux()
	mux.Handle("/ws", websocket.Handler(func(c *websocket.Conn) {
		// Each message comes back prefixed by the pod, so the client
		// sees which backend holds the connection.
		for {
			var msg string
			if err := websocket.Message.Receive(c, &msg); err != nil {
				return
			}
			if err := websocket.Message.Send(c, pod+": "+msg); err != nil {
				return
			}
		}
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if d := r.URL.Query().Get("sleep"); d != "" {
			if dur, err := time.ParseDuration(d); err == nil {
				time.Sleep(dur)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Answer{
			Pod: pod, Method: r.Method, Proto: r.Proto, Host: r.Host, Path: r.URL.Path,
			Remote: r.RemoteAddr[:strings.LastIndex(r.RemoteAddr, ":")], Headers: r.Header,
		})
	})
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("echo %s serving on :%s", pod, port)
	log.Fatal(srv.ListenAndServe())
}
