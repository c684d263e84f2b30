// Package audit records what the API server was asked and what it
// answered, as upstream's auditing does: an audit.k8s.io/v1 Policy decides
// per request the level (None, Metadata, Request, RequestResponse) and
// the stages to leave out, and audit.k8s.io/v1 Events go to an
// EventWriter, by default one JSON line each to a rotated file.
//
// The policy is a pure function of the request's attributes
// (Policy.Evaluate); everything else is plumbing around it. An API server
// uses the package in four places:
//
//	// at the start of the handler chain, for every request
//	ctx = auditor.WithRequest(ctx, auditID, receivedAt)
//
//	// after authentication, around the rest of the chain
//	h = auditor.Handler(h, describe)
//	unauthorized = auditor.FailedAuthentication(unauthorized, describe)
//
//	// in the handlers, where bodies are decoded and answers written
//	audit.LogRequestObject(ctx, obj, jsonEncoder)
//	audit.LogRequestPatch(ctx, patch, patchType)
//	audit.LogResponseObject(ctx, obj, jsonEncoder)
//
// and anywhere on the request path, to explain a decision:
//
//	audit.AddAnnotation(ctx, "authorization.k8s.io/decision", "allow")
//	audit.LogImpersonatedUser(ctx, user)
//
// All of these do nothing for a context without a record, so code that
// calls them need not know whether auditing is on.
package audit
