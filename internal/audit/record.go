package audit

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"
)

// record is one request's event, kept in the request's context from the
// start of the handler chain so that any code on the request path can
// annotate it.
type record struct {
	auditor *Auditor

	// mu guards everything below: a watch's ResponseStarted stage and a
	// handler's annotations can come from different goroutines.
	mu sync.Mutex
	// decided is set once the policy has been evaluated; before that the
	// record takes annotations as if it were audited, as upstream's.
	decided bool
	cfg     RequestConfig
	event   auditv1.Event
}

type recordKey struct{}

// WithRequest starts the audit record of a request with its audit ID and
// the time the server received it. Every other function of the package
// reads the record from the context this returns.
func (a *Auditor) WithRequest(ctx context.Context, id string, received time.Time) context.Context {
	rec := &record{auditor: a}
	rec.event.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: auditv1.SchemeGroupVersion.String()}
	rec.event.AuditID = types.UID(id)
	rec.event.RequestReceivedTimestamp = metav1.NewMicroTime(received)
	return context.WithValue(ctx, recordKey{}, rec)
}

func recordFrom(ctx context.Context) *record {
	rec, _ := ctx.Value(recordKey{}).(*record)
	return rec
}

// ID returns the audit ID of the request, or "" when auditing is off.
func ID(ctx context.Context) string {
	if rec := recordFrom(ctx); rec != nil {
		return string(rec.event.AuditID)
	}
	return ""
}

// enabled reports whether the record takes data: until the policy is
// evaluated it does, afterwards only at a level above None.
func (r *record) enabledLocked() bool {
	return !r.decided || r.cfg.Level != auditv1.LevelNone
}

// level is the decided level, None before the decision.
func (r *record) levelLocked() auditv1.Level {
	if !r.decided {
		return auditv1.LevelNone
	}
	return r.cfg.Level
}

// AddAnnotation records key=value in the request's audit event. A key
// keeps its first value, as upstream: a later different value is dropped
// with a warning. It does nothing when the request is not audited, so any
// code on the request path may call it (authorization decisions, admission
// plugins).
func AddAnnotation(ctx context.Context, key, value string) {
	rec := recordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.enabledLocked() {
		return
	}
	ev := &rec.event
	if ev.Annotations == nil {
		ev.Annotations = map[string]string{}
	}
	if old, ok := ev.Annotations[key]; ok && old != value {
		rec.auditor.log.Warn("audit annotation already set", "key", key, "value", value, "kept", old, "auditID", ev.AuditID)
		return
	}
	ev.Annotations[key] = value
}

// LogImpersonatedUser records the user a request acts as when it
// impersonates another. The policy was evaluated for the authenticated
// user, who stays in the event's user field.
func LogImpersonatedUser(ctx context.Context, user authnv1.UserInfo) {
	rec := recordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if atLeast(rec.levelLocked(), auditv1.LevelMetadata) {
		rec.event.ImpersonatedUser = user.DeepCopy()
	}
}

// LogRequestObject records what a create or update decoded from its body.
// At Metadata and above it completes the object reference (a create names
// its object only in the body); at Request and above it stores the object
// as JSON written by enc.
func LogRequestObject(ctx context.Context, obj runtime.Object, enc runtime.Encoder) {
	rec := recordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	level, omitMF := rec.levelLocked(), rec.cfg.OmitManagedFields
	if atLeast(level, auditv1.LevelMetadata) {
		if acc, err := meta.Accessor(obj); err == nil {
			ref := rec.event.ObjectRef
			if ref == nil {
				ref = &auditv1.ObjectReference{}
				rec.event.ObjectRef = ref
			}
			if ref.Namespace == "" {
				ref.Namespace = acc.GetNamespace()
			}
			if ref.Name == "" {
				ref.Name = acc.GetName()
			}
			if ref.UID == "" {
				ref.UID = acc.GetUID()
			}
			if ref.ResourceVersion == "" {
				ref.ResourceVersion = acc.GetResourceVersion()
			}
		}
	}
	rec.mu.Unlock()
	if !atLeast(level, auditv1.LevelRequest) {
		return
	}
	// Encoding happens outside the lock: it is the expensive part.
	raw := encode(rec, obj, enc, omitMF)
	if raw == nil {
		return
	}
	rec.mu.Lock()
	rec.event.RequestObject = raw
	rec.mu.Unlock()
}

// LogRequestPatch records a patch body at Request and above. A YAML patch
// (server-side apply) is recorded as JSON, as upstream transcodes it, so
// that the event stays one JSON line; one that does not convert is left
// out, as the request fails on it anyway.
func LogRequestPatch(ctx context.Context, patch []byte, patchType string) {
	rec := recordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	level := rec.levelLocked()
	rec.mu.Unlock()
	if !atLeast(level, auditv1.LevelRequest) {
		return
	}
	raw := bytes.Clone(patch)
	if strings.Contains(patchType, "yaml") {
		var err error
		if raw, err = yaml.YAMLToJSON(patch); err != nil {
			return
		}
	}
	rec.mu.Lock()
	rec.event.RequestObject = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	rec.mu.Unlock()
}

// LogResponseObject records what the server answers: a Status's code,
// reason and message at Metadata and above, and the whole object as JSON
// written by enc at RequestResponse.
func LogResponseObject(ctx context.Context, obj runtime.Object, enc runtime.Encoder) {
	rec := recordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	level, omitMF := rec.levelLocked(), rec.cfg.OmitManagedFields
	if !atLeast(level, auditv1.LevelMetadata) {
		rec.mu.Unlock()
		return
	}
	if st, ok := obj.(*metav1.Status); ok {
		rec.event.ResponseStatus = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: st.Code}
	}
	rec.mu.Unlock()
	if !atLeast(level, auditv1.LevelRequestResponse) {
		return
	}
	raw := encode(rec, obj, enc, omitMF)
	rec.mu.Lock()
	rec.event.ResponseObject = raw
	rec.mu.Unlock()
}

func encode(rec *record, obj runtime.Object, enc runtime.Encoder, omitManagedFields bool) *runtime.Unknown {
	if omitManagedFields {
		obj = withoutManagedFields(obj)
	}
	var buf bytes.Buffer
	if err := enc.Encode(obj, &buf); err != nil {
		rec.auditor.log.Error("audit: encode object", "auditID", rec.event.AuditID, "err", err)
		return nil
	}
	return &runtime.Unknown{Raw: buf.Bytes(), ContentType: runtime.ContentTypeJSON}
}

// withoutManagedFields returns a copy of obj (an object, a list or a
// Table) without managedFields; the original may be a shared cached
// object and is never changed.
func withoutManagedFields(obj runtime.Object) runtime.Object {
	_, accErr := meta.Accessor(obj)
	table, isTable := obj.(*metav1.Table)
	isList := meta.IsListType(obj)
	if accErr != nil && !isList && !isTable {
		return obj
	}
	obj = obj.DeepCopyObject()
	strip := func(o runtime.Object) error {
		if o == nil {
			return nil
		}
		if acc, err := meta.Accessor(o); err == nil {
			acc.SetManagedFields(nil)
		}
		return nil
	}
	if accErr == nil {
		_ = strip(obj)
	}
	if isList {
		_ = meta.EachListItem(obj, strip)
	}
	if isTable {
		table = obj.(*metav1.Table)
		for i := range table.Rows {
			_ = strip(table.Rows[i].Object.Object)
		}
	}
	return obj
}

// Upstream cuts user agents at 1 KiB.
const (
	maxUserAgent    = 1024
	truncatedSuffix = "...TRUNCATED"
)

// fillMetadata writes what every audited event carries, from the request
// and the attributes the policy was evaluated on.
func (r *record) fillMetadataLocked(req *http.Request, a Attributes) {
	ev := &r.event
	ev.Verb = a.Verb
	ev.RequestURI = req.URL.RequestURI()
	ev.UserAgent = req.UserAgent()
	if len(ev.UserAgent) > maxUserAgent {
		ev.UserAgent = ev.UserAgent[:maxUserAgent] + truncatedSuffix
	}
	for _, ip := range utilnet.SourceIPs(req) {
		ev.SourceIPs = append(ev.SourceIPs, ip.String())
	}
	if a.User != nil {
		ev.User = *a.User.DeepCopy()
	}
	if a.ResourceRequest {
		ev.ObjectRef = &auditv1.ObjectReference{
			Namespace:   a.Namespace,
			Name:        a.Name,
			Resource:    a.Resource,
			Subresource: a.Subresource,
			APIGroup:    a.APIGroup,
			APIVersion:  a.APIVersion,
		}
	}
}
