// Package framework holds what every part of the scheduler shares: the
// in-memory snapshot of the cluster (nodes, the pods on them and what they
// request), the plugin interfaces with one method per extension point, the
// typed status a plugin answers with, and the decision itself — a pure
// function from a pod and a snapshot to a node, or to the reasons why no
// node fits.
package framework

import (
	"errors"
	"strings"
)

// Code says how a plugin judged a pod.
type Code int

const (
	// Success: the pod may go to this node (or the step succeeded).
	Success Code = iota
	// Unschedulable: the node does not fit now, but evicting pods from it
	// could make it fit, so preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the node does not fit, and removing
	// pods from it would not change that (taints, affinity, cordon).
	UnschedulableAndUnresolvable
	// Error: the plugin failed; the attempt is retried with backoff.
	Error
)

func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Unschedulable:
		return "Unschedulable"
	case UnschedulableAndUnresolvable:
		return "UnschedulableAndUnresolvable"
	case Error:
		return "Error"
	}
	return "Unknown"
}

// Status is a plugin's answer. A nil *Status means Success, so the common
// case allocates nothing.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with the reasons a person reads in the
// FailedScheduling event.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an internal failure.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the status is nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsRejected reports whether the node (or pod) was rejected as
// unschedulable, with or without a chance that preemption helps.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// Reasons returns the human-readable reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin names the plugin that produced the status.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records which plugin answered.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// AsError returns the status as an error, nil for success.
func (s *Status) AsError() error {
	if s.IsSuccess() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}
