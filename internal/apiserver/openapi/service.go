// Package openapi serves the OpenAPI documents of Orca's API: the single
// OpenAPI v2 (Swagger) document at /openapi/v2 and the per group-version
// OpenAPI v3 documents under /openapi/v3, in the shape kube-apiserver
// publishes them. kubectl depends on them: `kubectl explain` reads the v3
// schemas, `kubectl apply` uses them to build strategic merge patches and to
// decide whether the server validates fields itself (the fieldValidation
// parameter of each kind's PATCH operation), and older clients read v2.
//
// Schemas come from zz_generated.openapi.go, which openapi-gen writes from
// the k8s.io/api types (hack/update-openapi.sh); paths and operations are
// derived from the served resources (routes.go) and assembled by
// kube-openapi's builders exactly as upstream assembles its go-restful routes.
package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/orca-project/orca/internal/registry"
)

// Media types of the documents. The "@" spellings are the deprecated ones
// older kubectl versions still send; both are answered with the dotted form,
// as upstream does.
const (
	mimeJSON          = "application/json"
	subtypeJSON       = "json"
	subtypeV2Proto    = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	subtypeV2ProtoOld = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	subtypeV3Proto    = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	subtypeV3ProtoOld = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
	v3Prefix          = "/openapi/v3/"
)

// Service serves the OpenAPI documents of a fixed set of resources.
//
// Nothing is built until the first request for a document, so a server that
// no client asks for OpenAPI pays only for code: about 1.5 MB of anonymous
// memory and 6 MB of file-backed pages of a binary some 20 MB larger (kube-
// openapi's builders, gnostic's protobuf descriptors, the generated schemas).
// The v2 document and the v3 documents are built separately, since current
// clients mostly fetch only v3, and once built only gzip-compressed
// serializations are kept: the spec objects, the generated definitions and
// the uncompressed JSON are dropped.
//
// Measured with the 30 built-in resources on a 2-core linux/amd64 machine
// (TestMemory, go test -run TestMemory -v):
//
//   - all 20 v3 documents: built in 200-300 ms; the live heap grows by
//     0.5 MB (0.37 MB of gzipped JSON) and RSS by 1-3 MB, after a transient
//     peak about 20 MB above the starting RSS;
//   - the v2 document: 150-250 ms, +0.2 MB of heap (0.13 MB kept); turning
//     it into protobuf (gnostic parses the JSON as YAML) takes ~150 ms and
//     peaks about 30 MB above the starting RSS, then keeps 0.15 MB;
//   - everything built and served in both formats: +1.6 MB of live heap,
//     +5 MB of RSS.
//
// Without returning the build garbage to the OS (releaseMemory) the RSS
// stayed 16 MB (v3) and 35 MB (v2 and its protobuf) higher.
type Service struct {
	resources []*registry.Resource
	version   string

	v2Once sync.Once
	v2     *document
	v2Err  error

	v3Once sync.Once
	v3     *v3Documents
	v3Err  error

	// custom describes the CustomResourceDefinitions and extension
	// servers served; nil when there are none. customMu orders its
	// replacements.
	custom   atomic.Pointer[customDocs]
	customMu sync.Mutex
}

type v3Documents struct {
	index *document            // the /openapi/v3 discovery document
	byKey map[string]*document // "apis/apps/v1" -> its document
	// paths are the index's entries, kept to add custom documents to.
	paths map[string]handler3.OpenAPIV3DiscoveryGroupVersion
}

// New returns a Service for resources, announcing version (for example
// "v1.37.2") as the API version in the documents' info. It checks that the
// resources yield a consistent set of operations; whether every type has a
// generated schema is only known when the documents are built, which the
// package's tests do for the built-in resources.
func New(resources []*registry.Resource, version string) (*Service, error) {
	if _, err := containers(resources); err != nil {
		return nil, fmt.Errorf("openapi: describing resources: %w", err)
	}
	return &Service{resources: append([]*registry.Resource(nil), resources...), version: version}, nil
}

// RegisterRoutes serves /openapi/v2, /openapi/v3 and the v3 documents under
// /openapi/v3/ on mux. To mount them behind the API server's filters, give
// the server the mux as the handler of the "/openapi" prefix.
func (s *Service) RegisterRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi/v2", s.serveV2)
	mux.HandleFunc("GET /openapi/v3", s.serveV3Index)
	mux.HandleFunc("GET "+v3Prefix, s.serveV3Document)
}

func (s *Service) info() *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: s.version}}
}

func (s *Service) v2Document() (*document, error) {
	s.v2Once.Do(func() {
		s.v2, s.v2Err = s.buildV2()
		releaseMemory()
	})
	c := s.customDocuments()
	if c == nil || s.v2Err != nil {
		return s.v2, s.v2Err
	}
	c.v2Once.Do(func() {
		c.v2, c.v2Err = s.buildCustomV2(s.v2, c)
		releaseMemory()
	})
	return c.v2, c.v2Err
}

func (s *Service) v3Documents() (*v3Documents, error) {
	s.v3Once.Do(func() {
		s.v3, s.v3Err = s.buildV3()
		releaseMemory()
	})
	c := s.customDocuments()
	if c == nil || s.v3Err != nil {
		return s.v3, s.v3Err
	}
	c.v3Once.Do(func() {
		c.v3, c.v3Err = s.buildCustomV3(s.v3, c)
		releaseMemory()
	})
	return c.v3, c.v3Err
}

// releaseMemory hands the garbage of a build back to the operating system
// right away. A build allocates several times what it keeps; left to the
// background scavenger, the process's RSS would stay near that peak for
// minutes. It runs once per document kind, so its pause does not matter.
func releaseMemory() { debug.FreeOSMemory() }

func routeContainers(cs []*container) []common.RouteContainer {
	out := make([]common.RouteContainer, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

func (s *Service) buildV2() (*document, error) {
	cs, err := containers(s.resources)
	if err != nil {
		return nil, fmt.Errorf("describing resources: %w", err)
	}
	namer := newDefinitionNamer(clientscheme.Scheme)
	sw, err := builder.BuildOpenAPISpecFromRoutes(routeContainers(cs), &common.Config{
		ProtocolList: []string{"https"},
		Info:         s.info(),
		CommonResponses: map[int]spec.Response{
			http.StatusUnauthorized: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
		},
		GetDefinitions:                 GetOpenAPIDefinitions,
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              namer.name,
	})
	if err != nil {
		return nil, fmt.Errorf("building OpenAPI v2 document: %w", err)
	}
	data, err := sw.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("serializing OpenAPI v2 document: %w", err)
	}
	return newDocument(data, v2ToProto)
}

func v2ToProto(data []byte) ([]byte, error) {
	doc, err := openapi_v2.ParseDocument(data)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}

func (s *Service) buildV3() (*v3Documents, error) {
	cs, err := containers(s.resources)
	if err != nil {
		return nil, fmt.Errorf("describing resources: %w", err)
	}
	namer := newDefinitionNamer(clientscheme.Scheme)
	// The generated definitions are computed once and shared by every
	// group-version's build; the builder would otherwise recompute all of
	// them for each.
	defs := GetOpenAPIDefinitions(func(key string) spec.Ref {
		name, _ := namer.name(key)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(name))
	})
	docs := &v3Documents{byKey: make(map[string]*document, len(cs)), paths: make(map[string]handler3.OpenAPIV3DiscoveryGroupVersion, len(cs))}
	for _, c := range cs {
		key := c.v3Key()
		doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, &common.OpenAPIV3Config{
			Info: s.info(),
			CommonResponses: map[int]*spec3.Response{
				http.StatusUnauthorized: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}},
			},
			Definitions:                    defs,
			GetOperationIDAndTagsFromRoute: operationIDAndTags,
			GetDefinitionName:              namer.name,
		})
		if err != nil {
			return nil, fmt.Errorf("building OpenAPI v3 document %s: %w", key, err)
		}
		if err := docs.add(key, doc); err != nil {
			return nil, err
		}
	}
	return docs, docs.buildIndex()
}

// add stores the document of one group version and lists it in the index.
func (docs *v3Documents) add(key string, doc *spec3.OpenAPI) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("serializing OpenAPI v3 document %s: %w", key, err)
	}
	return docs.addJSON(key, data)
}

// addJSON stores a group version's document given as JSON.
func (docs *v3Documents) addJSON(key string, data []byte) error {
	d, err := newDocument(data, handler3.ToV3ProtoBinary)
	if err != nil {
		return fmt.Errorf("storing OpenAPI v3 document %s: %w", key, err)
	}
	docs.byKey[key] = d
	docs.paths[key] = handler3.OpenAPIV3DiscoveryGroupVersion{ServerRelativeURL: serverRelativeURL(key, d.etag)}
	return nil
}

// buildIndex writes the /openapi/v3 discovery document of the documents.
func (docs *v3Documents) buildIndex() error {
	data, err := json.Marshal(handler3.OpenAPIV3Discovery{Paths: docs.paths})
	if err != nil {
		return fmt.Errorf("serializing OpenAPI v3 index: %w", err)
	}
	if docs.index, err = newDocument(data, nil); err != nil {
		return fmt.Errorf("storing OpenAPI v3 index: %w", err)
	}
	return nil
}

// serverRelativeURL is where the index points clients for one document. The
// hash makes the URL change whenever the document does, so clients may cache
// each URL forever (kubectl keeps them on disk).
func serverRelativeURL(key, etag string) string {
	u := url.URL{Path: path.Join("/openapi/v3", key), RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

func (s *Service) serveV2(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	format, ok := negotiate(r, subtypeV2Proto, subtypeV2ProtoOld)
	if !ok {
		http.Error(w, "the OpenAPI v2 document is served as application/json or application/"+subtypeV2Proto, http.StatusNotAcceptable)
		return
	}
	doc, err := s.v2Document()
	if err != nil {
		http.Error(w, "OpenAPI v2 document unavailable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	doc.serve(w, r, format, "application/"+subtypeV2Proto)
}

func (s *Service) serveV3Index(w http.ResponseWriter, r *http.Request) {
	docs, err := s.v3Documents()
	if err != nil {
		http.Error(w, "OpenAPI v3 documents unavailable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	docs.index.serve(w, r, subtypeJSON, "")
}

func (s *Service) serveV3Document(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, v3Prefix)
	w.Header().Add("Vary", "Accept")
	format, ok := negotiate(r, subtypeV3Proto, subtypeV3ProtoOld)
	if !ok {
		http.Error(w, "OpenAPI v3 documents are served as application/json or application/"+subtypeV3Proto, http.StatusNotAcceptable)
		return
	}
	docs, err := s.v3Documents()
	if err != nil {
		http.Error(w, "OpenAPI v3 documents unavailable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	doc, found := docs.byKey[key]
	if !found {
		http.Error(w, fmt.Sprintf("no OpenAPI v3 document for %q", key), http.StatusNotFound)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		// A stale hash means the client's index is older than this
		// document; send it to the current URL rather than serve content
		// it would cache under the wrong name.
		if hash != doc.etag {
			http.Redirect(w, r, serverRelativeURL(key, doc.etag), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	doc.serve(w, r, format, "application/"+subtypeV3Proto)
}

// negotiate picks JSON or protobuf from the Accept header, in the client's
// order of preference. It returns subtypeJSON or protoSubtype.
func negotiate(r *http.Request, protoSubtype, deprecatedProtoSubtype string) (string, bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, c := range goautoneg.ParseAccept(accept) {
		if c.Type != "application" && c.Type != "*" {
			continue
		}
		switch c.SubType {
		case subtypeJSON, "*":
			return subtypeJSON, true
		case protoSubtype, deprecatedProtoSubtype:
			return protoSubtype, true
		}
	}
	return "", false
}

// document is one served document, kept gzip-compressed: the documents
// compress about tenfold and nearly every client (client-go, so kubectl)
// accepts gzip, so this is both the smallest form to keep and the cheapest to
// serve. The protobuf form is derived from the JSON on first request.
type document struct {
	gzJSON   []byte
	etag     string // of the uncompressed JSON, as upstream computes it
	modified time.Time

	toProto   func(json []byte) ([]byte, error)
	protoOnce sync.Once
	gzProto   []byte
	protoErr  error
}

// computeETag is upstream's: clients compare it with the hash in the v3
// index, so it must be computed the same way.
func computeETag(data []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(data))
}

func newDocument(data []byte, toProto func([]byte) ([]byte, error)) (*document, error) {
	gz, err := compress(data)
	if err != nil {
		return nil, err
	}
	return &document{gzJSON: gz, etag: computeETag(data), modified: time.Now(), toProto: toProto}, nil
}

func (d *document) protobuf() ([]byte, error) {
	d.protoOnce.Do(func() {
		data, err := decompress(d.gzJSON)
		if err != nil {
			d.protoErr = err
			return
		}
		pb, err := d.toProto(data)
		if err != nil {
			d.protoErr = fmt.Errorf("converting to protobuf: %w", err)
			return
		}
		d.gzProto, d.protoErr = compress(pb)
		releaseMemory()
	})
	return d.gzProto, d.protoErr
}

// serve writes the document in format (subtypeJSON or a protobuf subtype,
// answered with protoContentType), honouring If-None-Match against the ETag.
// Both formats share the ETag, which is why responses vary on Accept.
func (d *document) serve(w http.ResponseWriter, r *http.Request, format, protoContentType string) {
	body, contentType := d.gzJSON, mimeJSON
	if format != subtypeJSON {
		pb, err := d.protobuf()
		if err != nil {
			http.Error(w, "OpenAPI document unavailable as protobuf: "+err.Error(), http.StatusInternalServerError)
			return
		}
		body, contentType = pb, protoContentType
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Etag", strconv.Quote(d.etag))
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
	} else {
		plain, err := decompress(body)
		if err != nil {
			http.Error(w, "OpenAPI document unavailable: "+err.Error(), http.StatusInternalServerError)
			return
		}
		body = plain
	}
	http.ServeContent(w, r, "", d.modified, bytes.NewReader(body))
}

// acceptsGzip reports whether the Accept-Encoding header allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, field := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(field, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.TrimSpace(coding)
			if coding != "gzip" && coding != "*" {
				continue
			}
			if q, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
				if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

func compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("compressing: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing: %w", err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

func decompress(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	return data, nil
}
