package networking

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/orca-project/orca/internal/registry"
)

// annotationIngressClass is the class annotation that spec.ingressClassName
// replaced; upstream still accepts it and checks it against the field.
const annotationIngressClass = "kubernetes.io/ingress.class"

// Ingresses is the ingresses resource. Upstream's strategy clears the
// status on create, keeps it on writes to the main resource and bumps the
// generation when the spec changes, which Status and TracksGeneration ask
// of the server. A status write resets no metadata.
//
// Updates are validated with relaxations taken from the stored object,
// so ValidateUpdate replaces Validate, and a status write checks only the
// status, as upstream's status strategy does.
var Ingresses = &registry.Resource{
	Group: networkingv1.GroupName, Version: "v1", Name: "ingresses", Singular: "ingress", Kind: "Ingress",
	Namespaced:             true,
	ShortNames:             []string{"ing"},
	New:                    func() runtime.Object { return &networkingv1.Ingress{} },
	NewList:                func() runtime.Object { return &networkingv1.IngressList{} },
	Status:                 true,
	TracksGeneration:       true,
	Validate:               registry.TypedValidate(validateIngressCreate),
	ValidateUpdate:         registry.TypedValidateUpdate(validateIngressUpdate),
	ValidateUpdateReplaces: true,
	ValidateStatusUpdate:   registry.TypedValidateUpdate(validateIngressStatusUpdate),
	Table:                  ingressTable,
}

// The path types, sorted as upstream lists them from a set, and upstream's
// rules for the paths of the Exact and Prefix types.
var (
	supportedPathTypes = []string{
		string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix),
	}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// ingressValidationOptions are upstream's IngressValidationOptions: what
// an update may keep because the stored object already had it.
type ingressValidationOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
	// dns1035ServiceNames checks backend service names as DNS-1035
	// labels. Upstream's RelaxedServiceNameValidation gate is locked on
	// in 1.37, so real validation accepts any DNS label; only upstream's
	// test for invalid wildcard rules, which uses zero options, still
	// checks the strict form.
	dns1035ServiceNames bool
}

// validateIngressCreate is upstream's ValidateIngressCreate.
func validateIngressCreate(ing *networkingv1.Ingress) field.ErrorList {
	errs := validateIngressSpec(&ing.Spec, field.NewPath("spec"), ingressValidationOptions{})
	if class, ok := ing.Annotations[annotationIngressClass]; ok && ing.Spec.IngressClassName != nil && class != *ing.Spec.IngressClassName {
		// Upstream's path, without "metadata".
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(annotationIngressClass), class, "must match `ingressClassName` when both are specified"))
	}
	return errs
}

// validateIngressUpdate is upstream's ValidateIngressUpdate: secret names
// and wildcard-host rules that were already invalid may stay so.
func validateIngressUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	opts := ingressValidationOptions{
		allowInvalidSecretName:       hasInvalidSecretName(old),
		allowInvalidWildcardHostRule: hasInvalidWildcardHostRule(old),
	}
	return validateIngressSpec(&ing.Spec, field.NewPath("spec"), opts)
}

// validateIngressSpec is upstream's ValidateIngressSpec.
func validateIngressSpec(spec *networkingv1.IngressSpec, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(fldPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, fldPath.Child("defaultBackend"), opts)...)
	}
	for i, rule := range spec.Rules {
		errs = append(errs, validateIngressRule(&rule, fldPath.Child("rules").Index(i), opts)...)
	}
	for i, tls := range spec.TLS {
		errs = append(errs, validateIngressTLS(&tls, fldPath.Child("tls").Index(i), opts)...)
	}
	if spec.IngressClassName != nil {
		errs = append(errs, invalidEach(fldPath.Child("ingressClassName"), *spec.IngressClassName,
			apimachineryvalidation.NameIsDNSSubdomain(*spec.IngressClassName, false))...)
	}
	return errs
}

// validateIngressTLS checks one entry of spec.tls. Its hosts may be
// wildcards; upstream leaves RFC 6125's finer rules aside.
func validateIngressTLS(tls *networkingv1.IngressTLS, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var errs field.ErrorList
	for i, host := range tls.Hosts {
		errs = append(errs, invalidEach(fldPath.Child("hosts").Index(i), host, hostMessages(host))...)
	}
	if !opts.allowInvalidSecretName {
		errs = append(errs, invalidEach(fldPath.Child("secretName"), tls.SecretName, secretNameMessages(tls.SecretName))...)
	}
	return errs
}

// hostMessages checks a host name, which may start with a wildcard label.
func hostMessages(host string) []string {
	if strings.Contains(host, "*") {
		return utilvalidation.IsWildcardDNS1123Subdomain(host)
	}
	return utilvalidation.IsDNS1123Subdomain(host)
}

// secretNameMessages is upstream's validateTLSSecretName: the secret name
// is optional (the controller's default certificate).
func secretNameMessages(name string) []string {
	if name == "" {
		return nil
	}
	return apimachineryvalidation.NameIsDNSSubdomain(name, false)
}

// validateIngressRule is one turn of upstream's validateIngressRules. A
// host is a DNS name, never an IP address, and may be a wildcard.
func validateIngressRule(rule *networkingv1.IngressRule, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var errs field.ErrorList
	wildcard := false
	if rule.Host != "" {
		hostPath := fldPath.Child("host")
		if netutils.ParseIPSloppy(rule.Host) != nil {
			errs = append(errs, field.Invalid(hostPath, rule.Host, "must be a DNS name, not an IP address"))
		}
		wildcard = strings.Contains(rule.Host, "*")
		errs = append(errs, invalidEach(hostPath, rule.Host, hostMessages(rule.Host))...)
	}
	if !wildcard || !opts.allowInvalidWildcardHostRule {
		errs = append(errs, validateIngressRuleValue(&rule.IngressRuleValue, fldPath, opts)...)
	}
	return errs
}

// validateIngressRuleValue is upstream's validateIngressRuleValue and
// validateHTTPIngressRuleValue.
func validateIngressRuleValue(value *networkingv1.IngressRuleValue, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	if value.HTTP == nil {
		return nil
	}
	pathsPath := fldPath.Child("http", "paths")
	var errs field.ErrorList
	if len(value.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(pathsPath, ""))
	}
	for i, p := range value.HTTP.Paths {
		errs = append(errs, validateHTTPIngressPath(&p, pathsPath.Index(i), opts)...)
	}
	return errs
}

// validateHTTPIngressPath is upstream's: Exact and Prefix paths are
// absolute and free of sequences that would read differently once
// normalised; ImplementationSpecific paths (regular expressions, for some
// controllers) need only be absolute, and may be empty.
func validateHTTPIngressPath(p *networkingv1.HTTPIngressPath, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(fldPath.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	pathPath := fldPath.Child("path")
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(pathPath, p.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, field.Invalid(pathPath, p.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(p.Path, suffix) {
				errs = append(errs, field.Invalid(pathPath, p.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(pathPath, p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("pathType"), *p.PathType, supportedPathTypes))
	}
	return append(errs, validateIngressBackend(&p.Backend, fldPath.Child("backend"), opts)...)
}

// validateIngressBackend is upstream's: a backend is a Service, by name
// and by port name or number, or a resource of another kind, not both.
func validateIngressBackend(backend *networkingv1.IngressBackend, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	switch svc := backend.Service; {
	case backend.Resource != nil && svc != nil:
		return field.ErrorList{field.Invalid(fldPath, "", "cannot set both resource and service backends")}
	case backend.Resource != nil:
		ref := backend.Resource
		return validateTypedReference(fldPath.Child("resource"), ref.APIGroup, ref.Kind, ref.Name)
	case svc != nil:
		var errs field.ErrorList
		svcPath := fldPath.Child("service")
		if svc.Name == "" {
			errs = append(errs, field.Required(svcPath.Child("name"), ""))
		} else {
			nameIsValid := apimachineryvalidation.NameIsDNSLabel
			if opts.dns1035ServiceNames {
				nameIsValid = apimachineryvalidation.NameIsDNS1035Label
			}
			errs = append(errs, invalidEach(svcPath.Child("name"), svc.Name, nameIsValid(svc.Name, false))...)
		}
		port := svc.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(fldPath, "", "cannot set both port name & port number"))
		case port.Name != "":
			errs = append(errs, invalidEach(svcPath.Child("port", "name"), port.Name, utilvalidation.IsValidPortName(port.Name))...)
		case port.Number != 0:
			errs = append(errs, invalidEach(svcPath.Child("port", "number"), port.Number, utilvalidation.IsValidPortNum(int(port.Number)))...)
		default:
			errs = append(errs, field.Required(fldPath, "port name or number is required"))
		}
		return errs
	}
	return field.ErrorList{field.Invalid(fldPath, "", "resource or service backend is required")}
}

// hasInvalidSecretName is upstream's allowInvalidSecretName.
func hasInvalidSecretName(old *networkingv1.Ingress) bool {
	for _, tls := range old.Spec.TLS {
		if len(secretNameMessages(tls.SecretName)) > 0 {
			return true
		}
	}
	return false
}

// hasInvalidWildcardHostRule is upstream's allowInvalidWildcardHostRule,
// which checks the rules with zero options.
func hasInvalidWildcardHostRule(old *networkingv1.Ingress) bool {
	for _, rule := range old.Spec.Rules {
		if strings.Contains(rule.Host, "*") &&
			len(validateIngressRuleValue(&rule.IngressRuleValue, nil, ingressValidationOptions{dns1035ServiceNames: true})) > 0 {
			return true
		}
	}
	return false
}

// validateIngressStatusUpdate is upstream's ValidateIngressStatusUpdate
// and ValidateIngressLoadBalancerStatus. IPs are checked strictly
// (StrictIPCIDRValidation is on by default in 1.37), except those the
// stored status already holds.
func validateIngressStatusUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	var existingIPs []string
	for _, lb := range old.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			existingIPs = append(existingIPs, lb.IP)
		}
	}
	var errs field.ErrorList
	for i, lb := range ing.Status.LoadBalancer.Ingress {
		idxPath := field.NewPath("status", "loadBalancer", "ingress").Index(i)
		if lb.IP != "" {
			errs = append(errs, utilvalidation.IsValidIPForLegacyField(idxPath.Child("ip"), lb.IP, true, existingIPs)...)
		}
		if lb.Hostname != "" {
			hostnamePath := idxPath.Child("hostname")
			errs = append(errs, invalidEach(hostnamePath, lb.Hostname, utilvalidation.IsDNS1123Subdomain(lb.Hostname))...)
			if netutils.ParseIPSloppy(lb.Hostname) != nil {
				errs = append(errs, field.Invalid(hostnamePath, lb.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
