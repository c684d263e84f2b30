package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateLivenessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateReadinessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.TerminationGracePeriodSeconds != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), probe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return allErrs
}

func validateStartupProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	h := probe.ProbeHandler
	allErrs := validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, h.GRPC, nil, gracePeriod, fldPath)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.InitialDelaySeconds), fldPath.Child("initialDelaySeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.TimeoutSeconds), fldPath.Child("timeoutSeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.PeriodSeconds), fldPath.Child("periodSeconds"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.SuccessThreshold), fldPath.Child("successThreshold"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(probe.FailureThreshold), fldPath.Child("failureThreshold"))...)
	if probe.TerminationGracePeriodSeconds != nil && *probe.TerminationGracePeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *probe.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return allErrs
}

func validateLifecycle(l *corev1.Lifecycle, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if h := l.PostStart; h != nil {
		allErrs = append(allErrs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, gracePeriod, fldPath.Child("postStart"))...)
	}
	if h := l.PreStop; h != nil {
		allErrs = append(allErrs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, gracePeriod, fldPath.Child("preStop"))...)
	}
	return allErrs
}

var supportedHTTPSchemes = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)

// validateHandler requires exactly one action; the first one found is
// validated and any later one is reported as extra.
func validateHandler(exec *corev1.ExecAction, httpGet *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, grpc *corev1.GRPCAction, sleep *corev1.SleepAction, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	one := func(set bool, name string, validate func(*field.Path) field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		allErrs = append(allErrs, validate(fldPath.Child(name))...)
	}
	one(exec != nil, "exec", func(p *field.Path) field.ErrorList {
		if len(exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("command"), "")}
		}
		return nil
	})
	one(httpGet != nil, "httpGet", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if len(httpGet.Path) == 0 {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		errs = append(errs, validatePortNumOrName(httpGet.Port, p.Child("port"))...)
		if !supportedHTTPSchemes.Has(httpGet.Scheme) {
			errs = append(errs, field.NotSupported(p.Child("scheme"), httpGet.Scheme, sets.List(supportedHTTPSchemes)))
		}
		for _, h := range httpGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(h.Name) {
				errs = append(errs, field.Invalid(p.Child("httpHeaders"), h.Name, msg))
			}
		}
		return errs
	})
	one(tcp != nil, "tcpSocket", func(p *field.Path) field.ErrorList {
		return validatePortNumOrName(tcp.Port, p.Child("port"))
	})
	one(grpc != nil, "grpc", func(p *field.Path) field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(grpc.Port), p.Child("port"))
	})
	one(sleep != nil, "sleep", func(p *field.Path) field.ErrorList {
		// A nil grace period is already an error of its own.
		if gracePeriod != nil && (sleep.Seconds < 0 || sleep.Seconds > *gracePeriod) {
			return field.ErrorList{field.Invalid(p, sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a handler type"))
	}
	return allErrs
}
