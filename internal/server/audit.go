package server

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orca-project/orca/internal/audit"
)

// newAuditor builds the API server's auditor from --audit-policy-file and
// --audit-log-*, and returns what closes its log. As upstream, a log path
// without a policy records nothing (nil auditor), and a policy without a
// log path has nowhere to write to.
func newAuditor(opts Options, reg prometheus.Registerer) (*audit.Auditor, func(), error) {
	if opts.AuditPolicyFile == "" || opts.AuditLog.Path == "" {
		if opts.AuditLog.Path != "" {
			opts.Log.Info("no audit policy file provided, no events will be recorded for the log backend")
		}
		return nil, func() {}, nil
	}
	policy, warnings, err := audit.LoadPolicyFile(opts.AuditPolicyFile)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range warnings {
		opts.Log.Warn(w)
	}
	out, err := opts.AuditLog.Open()
	if err != nil {
		return nil, nil, err
	}
	a, err := audit.New(audit.Config{Policy: policy, Writer: audit.NewJSONLines(out), Log: opts.Log, Metrics: reg})
	if err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("audit: %w", err)
	}
	return a, func() { out.Close() }, nil
}
