package encryption

import (
	"encoding/base64"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
)

// validate checks a configuration as kube-apiserver's validation does, with
// its messages. It is written here rather than imported because upstream's
// validation package also validates authentication configurations and
// links a CEL compiler with it; KMS, which Orca does not support, is
// refused outright.
func validate(cfg *apiserverconfig.EncryptionConfiguration) field.ErrorList {
	root := field.NewPath("resources")
	var errs field.ErrorList
	if len(cfg.Resources) == 0 {
		return append(errs, field.Required(root, "at least one resources is required"))
	}
	for i, rc := range cfg.Resources {
		r := root.Index(i).Child("resources")
		p := root.Index(i).Child("providers")
		if len(rc.Resources) == 0 {
			errs = append(errs, field.Required(r, fmt.Sprintf("at least one %s is required", r)))
		}
		errs = append(errs, validateOverlap(rc.Resources, r)...)
		errs = append(errs, validateResourceNames(rc.Resources, r)...)
		if len(rc.Providers) == 0 {
			errs = append(errs, field.Required(p, fmt.Sprintf("at least one %s is required", p)))
		}
		for j, pc := range rc.Providers {
			path := p.Index(j)
			if n := countProviders(pc); n == 0 {
				errs = append(errs, field.Invalid(path, pc, "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"))
				continue
			} else if n > 1 {
				errs = append(errs, field.Invalid(path, pc, "more than one provider specified in a single element, should split into different list elements"))
				continue
			}
			switch {
			case pc.KMS != nil:
				errs = append(errs, field.Forbidden(path.Child("kms"), "KMS providers are not supported: use aescbc, aesgcm, secretbox or identity"))
			case pc.AESGCM != nil:
				errs = append(errs, validateKeys(pc.AESGCM.Keys, path.Child("aesgcm").Child("keys"), []int{16, 24, 32})...)
			case pc.AESCBC != nil:
				errs = append(errs, validateKeys(pc.AESCBC.Keys, path.Child("aescbc").Child("keys"), []int{16, 24, 32})...)
			case pc.Secretbox != nil:
				errs = append(errs, validateKeys(pc.Secretbox.Keys, path.Child("secretbox").Child("keys"), []int{32})...)
			}
		}
	}
	return errs
}

func countProviders(pc apiserverconfig.ProviderConfiguration) int {
	n := 0
	for _, set := range []bool{pc.KMS != nil, pc.AESGCM != nil, pc.AESCBC != nil, pc.Secretbox != nil, pc.Identity != nil} {
		if set {
			n++
		}
	}
	return n
}

var anyGroupAnyResource = schema.GroupResource{Group: "*", Resource: "*"}

// validateOverlap refuses a list naming one resource twice, or a resource
// and a wildcard that covers it.
func validateOverlap(resources []string, path *field.Path) field.ErrorList {
	grs := make([]schema.GroupResource, len(resources))
	for i, r := range resources {
		grs[i] = schema.ParseGroupResource(r)
	}
	var duplicate, overlap bool
	for i, a := range grs {
		for j, b := range grs {
			switch {
			case i == j:
			case a == b:
				duplicate = true
			case a == anyGroupAnyResource:
				overlap = true
			case a.Group == b.Group && (a.Resource == "*" || b.Resource == "*"):
				overlap = true
			}
		}
	}
	var errs field.ErrorList
	if duplicate {
		errs = append(errs, field.Invalid(path, resources, "the same resource cannot be specified multiple times"))
	}
	if overlap {
		errs = append(errs, field.Invalid(path, resources, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"))
	}
	return errs
}

func validateResourceNames(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, res := range resources {
		gr := schema.ParseGroupResource(res)
		var msg string
		switch {
		case strings.ToLower(res) != res:
			msg = "resource name should not contain capital letters"
		case res == "*":
			msg = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
		case res == "apiserveripinfo" || res == "serviceipallocations" || res == "servicenodeportallocations":
			msg = "resources which do not have REST API/s cannot be encrypted"
		case gr.Group == "events.k8s.io":
			msg = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
		case gr.Group == "extensions":
			msg = "'extensions' group has been removed and cannot be used for encryption"
		case gr.Group == "*" && gr.Resource != "*":
			msg = "encrypting the same resource across groups is not supported"
		default:
			continue
		}
		errs = append(errs, field.Invalid(path.Index(j), res, msg))
	}
	return errs
}

func validateKeys(keys []apiserverconfig.Key, path *field.Path, sizes []int) field.ErrorList {
	var errs field.ErrorList
	if len(keys) == 0 {
		return append(errs, field.Required(path, "at least one keys is required"))
	}
	for i, k := range keys {
		p := path.Index(i)
		if k.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "name is a mandatory field for a key"))
		}
		if k.Secret == "" {
			errs = append(errs, field.Required(p.Child("secret"), "secret is a mandatory field for a key"))
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("secret"), "REDACTED", "secrets must be base64 encoded"))
			continue
		}
		ok := false
		for _, n := range sizes {
			ok = ok || len(secret) == n
		}
		if !ok {
			errs = append(errs, field.Invalid(p.Child("secret"), "REDACTED", fmt.Sprintf("secret is not of the expected length, got %d, expected one of %v", len(secret), sizes)))
		}
	}
	return errs
}
