// Command echo is the end-to-end tests' HTTP backend: it answers every
// request with what it received (as JSON: the pod that answered, the
// method, host, path and headers), and echoes WebSocket messages on /ws.
// It listens on $PORT (8080 when unset) and names itself by $POD_NAME;
// on the same port over UDP it answers every datagram with its name.
//
// `echo udp-client ADDR COUNT` is a UDP client instead: from one socket,
// so that the connection tracker keeps one entry for all of them, it
// sends COUNT datagrams to ADDR, one every 100 ms, and prints each
// answer (a pod's name) or "-" when none came within the interval.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
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
	if len(os.Args) == 4 && os.Args[1] == "udp-client" {
		udpClient(os.Args[2], os.Args[3])
		return
	}
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
	go serveUDP(port, pod)
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("echo %s serving on :%s", pod, port)
	log.Fatal(srv.ListenAndServe())
}

func serveUDP(port, pod string) {
	conn, err := net.ListenPacket("udp", ":"+port)
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 1500)
	for {
		_, from, err := conn.ReadFrom(buf)
		if err != nil {
			log.Fatal(err)
		}
		_, _ = conn.WriteTo([]byte(pod), from)
	}
}

func udpClient(addr, count string) {
	n, err := strconv.Atoi(count)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 1500)
	for range n {
		start := time.Now()
		_, _ = conn.Write([]byte("ping"))
		_ = conn.SetReadDeadline(start.Add(100 * time.Millisecond))
		if k, err := conn.Read(buf); err == nil {
			fmt.Println(string(buf[:k]))
		} else {
			fmt.Println("-")
		}
		time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
	}
}
