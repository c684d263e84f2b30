package apiserver

import (
	"mime"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Media types the server reads and writes.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// codecs holds one serializer per wire format. They never modify the
// objects they encode, so shared cached objects are safe to write.
type codecs struct {
	json, strictJSON, yaml, strictYAML runtime.Serializer
	protobuf, rawProtobuf              runtime.Serializer
}

func newCodecs() *codecs {
	s := scheme.Scheme
	return &codecs{
		json:        kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{}),
		strictJSON:  kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true}),
		yaml:        kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true}),
		strictYAML:  kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true, Strict: true}),
		protobuf:    protobuf.NewSerializer(s, s),
		rawProtobuf: protobuf.NewRawSerializer(s, s),
	}
}

// mediaType is one entry of an Accept header.
type mediaType struct {
	Type   string            // "application/json"
	Params map[string]string // as, g, v, stream...
}

// As names the conversion a client asks for ("Table",
// "PartialObjectMetadata"...), empty for the object itself.
func (m mediaType) As() string { return m.Params["as"] }

// parseAccept splits an Accept header into media types, in the client's
// order. Quality values are ignored: Kubernetes clients list what they
// prefer first. The result is shared: callers only read it.
func parseAccept(header string) []mediaType {
	// A client sends the same few headers on every request; parsing them
	// each time was a percent of a create's allocations.
	if v, ok := acceptCache.Load(header); ok {
		return v.([]mediaType)
	}
	out := parseAcceptUncached(header)
	if acceptCached.Load() < maxAcceptCached {
		if _, loaded := acceptCache.LoadOrStore(header, out); !loaded {
			acceptCached.Add(1)
		}
	}
	return out
}

// Parsed Accept headers, at most maxAcceptCached of them: headers are the
// clients' to choose, and one that is not kept is parsed each time.
var (
	acceptCache  sync.Map // string → []mediaType
	acceptCached atomic.Int32
)

const maxAcceptCached = 256

func parseAcceptUncached(header string) []mediaType {
	if strings.TrimSpace(header) == "" {
		return []mediaType{{Type: mediaJSON}}
	}
	var out []mediaType
	for _, part := range strings.Split(header, ",") {
		t, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		out = append(out, mediaType{Type: t, Params: params})
	}
	return out
}

// outputType maps an accepted type onto a format the server writes, or ""
// when it cannot.
func outputType(t string) string {
	switch t {
	case mediaJSON, "*/*", "application/*", "application/json-patch+json":
		return mediaJSON
	case mediaYAML:
		return mediaYAML
	case mediaProtobuf:
		return mediaProtobuf
	}
	return ""
}

// encoderFor returns the serializer that writes a media type.
func (c *codecs) encoderFor(t string) runtime.Serializer {
	switch t {
	case mediaYAML:
		return c.yaml
	case mediaProtobuf:
		return c.protobuf
	}
	return c.json
}

// decoderFor returns the serializer that reads a request body of the
// given Content-Type, and whether the type is supported.
func (c *codecs) decoderFor(contentType string, strict bool) (runtime.Serializer, bool) {
	t, _, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return nil, false
	}
	switch t {
	case "", mediaJSON:
		if strict {
			return c.strictJSON, true
		}
		return c.json, true
	case mediaYAML, "application/x-yaml", "text/yaml":
		if strict {
			return c.strictYAML, true
		}
		return c.yaml, true
	case mediaProtobuf:
		return c.protobuf, true
	}
	return nil, false
}
