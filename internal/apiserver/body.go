package apiserver

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"time"
)

// readBody reads a request body within the server's size limit.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
	}
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", s.cfg.MaxBodyBytes))
	}
	return body, nil
}

// writeInput reads what every write request carries: its dryRun flag,
// its field validation and its body.
func (s *Server) writeInput(r *http.Request) (dryRun bool, fv fieldValidation, body []byte, err error) {
	if dryRun, err = parseDryRun(r); err != nil {
		return false, "", nil, err
	}
	if fv, err = parseFieldValidation(r); err != nil {
		return false, "", nil, err
	}
	if body, err = s.readBody(r); err != nil {
		return false, "", nil, err
	}
	return dryRun, fv, body, nil
}

// fieldValidation is the fieldValidation query parameter: what to do with
// unknown or duplicate fields in a body.
type fieldValidation string

const (
	validationStrict fieldValidation = "Strict"
	validationWarn   fieldValidation = "Warn"
	validationIgnore fieldValidation = "Ignore"
)

func parseFieldValidation(r *http.Request) (fieldValidation, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "":
		return validationWarn, nil
	case string(validationStrict), string(validationWarn), string(validationIgnore):
		return fieldValidation(v), nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("fieldValidation: Unsupported value: %q: supported values: \"Ignore\", \"Strict\", \"Warn\"", v))
	}
}

// warnings collects Warning headers for a response.
type warnings []string

func (w *warnings) add(msg string) { *w = append(*w, msg) }

func (w warnings) write(rw http.ResponseWriter) {
	for _, m := range w {
		rw.Header().Add("Warning", "299 - "+strconv.Quote(m))
	}
}

// decodeObject reads a body into a new object of the resource, applying
// the request's field validation. Strict decoding problems (unknown or
// duplicate fields) fail the request under Strict, become warnings under
// Warn and are dropped under Ignore.
func (s *Server) decodeObject(data []byte, contentType string, fv fieldValidation, newObj func() runtime.Object, warn *warnings) (runtime.Object, error) {
	dec, ok := s.codecs.decoderFor(contentType, fv != validationIgnore)
	if !ok {
		return nil, errUnsupportedMediaType(contentType)
	}
	obj, _, err := dec.Decode(data, nil, newObj())
	if err != nil {
		if se := strictErrors(err); se != nil {
			if fv == validationStrict {
				return nil, apierrors.NewBadRequest("strict decoding error: " + strings.Join(se, ", "))
			}
			for _, m := range se {
				warn.add(m)
			}
			if obj != nil {
				return obj, nil
			}
		}
		return nil, apierrors.NewBadRequest(decodeErrorMessage(err))
	}
	return obj, nil
}

// decodeResource reads a body into a new object of res. A custom
// resource's body is then pruned to its schema; the fields dropped are
// unknown fields to the request's field validation, as upstream reports
// them (`unknown field "spec.foo"`).
func (s *Server) decodeResource(res *resource, data []byte, contentType string, fv fieldValidation, warn *warnings) (runtime.Object, error) {
	if res.Unstructured {
		if t, _, _ := mime.ParseMediaType(contentType); t == mediaProtobuf {
			return nil, errUnsupportedMediaType(contentType)
		}
	}
	obj, err := s.decodeObject(data, contentType, fv, res.New, warn)
	if err != nil || res.Coerce == nil {
		return obj, err
	}
	unknown, err := res.Coerce(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if fv == validationIgnore || len(unknown) == 0 {
		return obj, nil
	}
	msgs := make([]string, len(unknown))
	for i, p := range unknown {
		msgs[i] = fmt.Sprintf("unknown field %q", p)
	}
	if fv == validationStrict {
		return nil, apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
	}
	for _, m := range msgs {
		warn.add(m)
	}
	return obj, nil
}

// strictErrors returns the messages of a strict decoding error, or nil for
// any other error.
func strictErrors(err error) []string {
	se, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range se.Errors() {
		out = append(out, e.Error())
	}
	return out
}

func decodeErrorMessage(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "couldn't get version/kind") {
		return "Object 'Kind' is missing in the request body: " + msg
	}
	return msg
}

// dryRun reports whether the request asks for dryRun=All; any other value
// is refused as upstream does.
func parseDryRun(r *http.Request) (bool, error) {
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("dryRun: Unsupported value: %q: supported values: \"All\"", v))
		}
	}
	return len(vals) > 0, nil
}

func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
