package apiserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

// initialEventsEndAnnotation marks the bookmark that ends the initial
// events of a watch list.
const initialEventsEndAnnotation = "k8s.io/initial-events-end"

func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	out, err := res.negotiate(r, "Table", "PartialObjectMetadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts, err := s.parseListOptions(r, res, ri.Namespace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	bookmarks := isTrue(q.Get("allowWatchBookmarks"))
	sendInitial := false
	if v := q.Get("sendInitialEvents"); v != "" {
		sendInitial = isTrue(v)
		if opts.rvMatch != string(metav1.ResourceVersionMatchNotOlderThan) {
			s.writeError(w, r, apierrors.NewBadRequest("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan"))
			return
		}
		if sendInitial && !bookmarks {
			s.writeError(w, r, apierrors.NewBadRequest("allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is true"))
			return
		}
	} else if opts.rvMatch != "" {
		s.writeError(w, r, apierrors.NewBadRequest("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		return
	}
	timeout := time.Duration(1800+rand.IntN(1800)) * time.Second
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", v)))
			return
		}
		timeout = time.Duration(n) * time.Second
	}
	rv, _ := storage.ParseResourceVersion(opts.rv)
	ctx := r.Context()
	// A watch that starts with the current state must include every write
	// acknowledged before it: wait for the cache to reach etcd's revision.
	if (sendInitial && opts.rv == "") || rv > res.cache.Revision() {
		want := rv
		if opts.rv == "" {
			cur, err := s.cfg.Store.CurrentRevision(ctx)
			if err != nil {
				s.writeError(w, r, apierrors.NewInternalError(err))
				return
			}
			want = cur
		}
		if err := res.cache.WaitFresh(ctx, want, freshTimeout); err != nil {
			if errors.Is(err, cache.ErrStopped) {
				// The resource stopped being served meanwhile.
				s.writeError(w, r, errNotFoundPath())
				return
			}
			s.writeError(w, r, apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", want, res.cache.Revision()), 1))
			return
		}
	}
	watcher, err := res.cache.Watch(cache.WatchOptions{
		From:              rv,
		SendInitialEvents: sendInitial,
		Bookmarks:         bookmarks,
		Namespace:         ri.Namespace,
		Match:             opts.matcher(res),
	})
	// The cache has queued the current state for this watcher: the
	// expensive part is done, so it gives back its seat, where upstream's
	// cache watcher signals the same.
	watchInitialized(ctx)
	stream, serr := s.newEventStream(w, r, res, out)
	if serr != nil {
		if watcher != nil {
			res.cache.Stop(watcher)
		}
		s.writeError(w, r, serr)
		return
	}
	tooOld := func() {
		// As upstream: the watch opens, then reports 410 Gone as an event
		// so that the client relists.
		st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, res.cache.Revision())).Status()
		st.Kind, st.APIVersion = "Status", "v1"
		_ = stream.send(watch.Error, &st, false)
	}
	if errors.Is(err, cache.ErrTooOld) {
		tooOld()
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer res.cache.Stop(watcher)
	s.metrics.watchers.Inc()
	defer s.metrics.watchers.Dec()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case ev, ok := <-watcher.Events():
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				if errors.Is(ev.Err, cache.ErrTooOld) {
					tooOld()
				}
				return
			}
			if err := stream.sendEvent(ev, first); err != nil {
				return
			}
			if ev.Type != watch.Bookmark {
				first = false
			}
			// Flush only when the queue is drained, so bursts go out in
			// few writes.
			if len(watcher.Events()) == 0 {
				stream.flush()
			}
		}
	}
}

// eventStream writes watch events in the negotiated framing: JSON lines,
// or length-prefixed protobuf WatchEvents.
type eventStream struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	res   *resource
	out   negotiated
	fl    http.Flusher
	buf   bytes.Buffer
	frame bytes.Buffer
	// asKey names the converted form this watcher reads among the shared
	// encodings.
	asKey string
}

func (s *Server) newEventStream(w http.ResponseWriter, r *http.Request, res *resource, out negotiated) (*eventStream, error) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("response writer cannot stream"))
	}
	ct := out.mediaType
	if ct == mediaYAML {
		// Watch streams have no YAML framing; upstream sends JSON.
		out.mediaType, ct = mediaJSON, mediaJSON
	}
	if ct == mediaProtobuf {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return &eventStream{s: s, w: w, r: r, res: res, out: out, fl: fl}, nil
}

func (e *eventStream) flush() { e.fl.Flush() }

// encodeObject encodes an event's object as the watcher asked for it. The
// objects of the cache's events, whole or as their metadata, are encoded
// once for all watchers of the format; tables depend on each request's
// options, and bookmarks and errors are made for each watcher.
func (e *eventStream) encodeObject(typ watch.EventType, obj runtime.Object, first bool) ([]byte, error) {
	convert := typ != watch.Error && typ != watch.Bookmark && e.out.as != ""
	shared := typ != watch.Error && typ != watch.Bookmark && (e.out.as == "" || e.out.as == "PartialObjectMetadata")
	if shared && e.s.watchEncodings != nil {
		key := encodingKey{obj: obj, media: e.out.mediaType}
		if e.out.as != "" {
			if e.asKey == "" {
				e.asKey = e.out.as + "/" + conversionGV(e.r, e.out.as).String()
			}
			key.as = e.asKey
		}
		return e.s.watchEncodings.encode(key, func(buf *bytes.Buffer) error {
			return e.encodeConverted(buf, obj, convert, first)
		})
	}
	e.buf.Reset()
	if err := e.encodeConverted(&e.buf, obj, convert, first); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// encodeConverted writes obj, converted first to the Table or metadata
// the watcher reads when convert is set.
func (e *eventStream) encodeConverted(buf *bytes.Buffer, obj runtime.Object, convert, first bool) error {
	if convert {
		conv, err := e.s.convert(e.r, e.res, e.out, obj, first)
		if err != nil {
			return err
		}
		obj = conv
	}
	return e.s.codecs.encoderFor(e.out.mediaType).Encode(obj, buf)
}

func (e *eventStream) sendEvent(ev cache.Event, first bool) error {
	obj := ev.Object
	if ev.Type == watch.Bookmark {
		obj = e.res.newWithKind()
		acc, _ := meta.Accessor(obj)
		acc.SetResourceVersion(strconv.FormatInt(ev.Rev, 10))
		if ev.InitialEventsEnd {
			acc.SetAnnotations(map[string]string{initialEventsEndAnnotation: "true"})
		}
		// A bookmark is not converted to a Table (clients read only its
		// version), but a metadata-only client (the garbage collector's
		// informers) cannot decode the full kind at all: as upstream, it
		// gets a PartialObjectMetadata.
		if e.out.as == "PartialObjectMetadata" {
			obj = partialMetadata(e.r, obj)
		}
		return e.send(ev.Type, obj, true)
	}
	return e.send(ev.Type, obj, first)
}

// send writes one event.
func (e *eventStream) send(typ watch.EventType, obj runtime.Object, first bool) error {
	body, err := e.encodeObject(typ, obj, first)
	if err != nil {
		return fmt.Errorf("encode watch event: %w", err)
	}
	if e.out.mediaType == mediaProtobuf {
		we := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: body}}
		data, err := we.Marshal()
		if err != nil {
			return fmt.Errorf("encode watch event: %w", err)
		}
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		if _, err := e.w.Write(n[:]); err != nil {
			return err
		}
		_, err = e.w.Write(data)
		return err
	}
	e.frame.Reset()
	e.frame.WriteString(`{"type":"`)
	e.frame.WriteString(string(typ))
	e.frame.WriteString(`","object":`)
	e.frame.Write(bytes.TrimRight(body, "\n"))
	e.frame.WriteString("}\n")
	_, err = e.w.Write(e.frame.Bytes())
	return err
}
