package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orca-project/orca/internal/audit"
)

// errNotAcceptable is the 406 a client gets when it accepts no format the
// server can write, with upstream's message.
func errNotAcceptable() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
	}}
}

// errUnsupportedMediaType is the 415 for a body the server cannot read.
func errUnsupportedMediaType(contentType string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", contentType),
	}}
}

// writeError writes err as a Kubernetes Status. Errors that are not
// already Status errors become 500s.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var status metav1.Status
	if se, ok := err.(apierrors.APIStatus); ok {
		status = se.Status()
	} else {
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		status = apierrors.NewInternalError(err).Status()
	}
	status.Kind = "Status"
	status.APIVersion = "v1"
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	code := int(status.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	// As upstream: a refusal that says when to come back (a disruption
	// budget still being processed, a timeout) says it in the header
	// clients honour.
	if d := status.Details; d != nil && d.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	// A Status is written in the first format the client accepts that is
	// not a conversion (a Table of an error makes no sense).
	mt := mediaJSON
	for _, m := range parseAccept(r.Header.Get("Accept")) {
		if out := outputType(m.Type); out != "" {
			mt = out
			break
		}
	}
	audit.LogResponseObject(r.Context(), &status, s.codecs.json)
	s.encode(w, code, mt, &status)
}

// encode writes obj with the serializer for mt.
func (s *Server) encode(w http.ResponseWriter, code int, mt string, obj runtime.Object) {
	var buf bytes.Buffer
	if err := s.codecs.encoderFor(mt).Encode(obj, &buf); err != nil {
		s.log.Error("encode response", "err", err)
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", mt)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// negotiated is the output a request asked for.
type negotiated struct {
	mediaType string
	// as is "", "Table", "PartialObjectMetadata" or
	// "PartialObjectMetadataList".
	as string
}

// negotiate picks the first acceptable output among the Accept header's
// entries. conversions lists the "as" targets the endpoint can produce.
func negotiate(r *http.Request, conversions ...string) (negotiated, error) {
	return negotiateOutput(r, false, conversions)
}

// negotiate is negotiate for an endpoint of r: a custom resource has no
// protobuf form, so a client that accepts protobuf first gets the next
// format it lists (its metadata and tables are protobuf all the same).
func (res *resource) negotiate(r *http.Request, conversions ...string) (negotiated, error) {
	return negotiateOutput(r, res.Unstructured, conversions)
}

func negotiateOutput(r *http.Request, noProtobuf bool, conversions []string) (negotiated, error) {
	accept := r.Header.Get("Accept")
	for _, m := range parseAccept(accept) {
		out := outputType(m.Type)
		if out == "" {
			continue
		}
		as := m.As()
		if as == "" {
			if noProtobuf && out == mediaProtobuf {
				continue
			}
			return negotiated{mediaType: out}, nil
		}
		g, v := m.Params["g"], m.Params["v"]
		for _, c := range conversions {
			if as == c && g == metav1.GroupName && (v == "v1" || v == "v1beta1") {
				return negotiated{mediaType: out, as: as}, nil
			}
		}
	}
	return negotiated{}, errNotAcceptable()
}

// conversionGV is the meta.k8s.io version a conversion is written in.
func conversionGV(r *http.Request, as string) schema.GroupVersion {
	for _, m := range parseAccept(r.Header.Get("Accept")) {
		if m.As() == as && strings.HasPrefix(m.Params["v"], "v1beta1") {
			return schema.GroupVersion{Group: metav1.GroupName, Version: "v1beta1"}
		}
		if m.As() == as {
			break
		}
	}
	return metav1.SchemeGroupVersion
}
