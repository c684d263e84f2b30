// Package encryption is encryption at rest: which value transformer each
// resource's objects pass through on their way to etcd, built from an
// upstream EncryptionConfiguration (apiserver.config.k8s.io/v1) with
// upstream's transformers and prefixes (`k8s:enc:aescbc:v1:KEY:`...), so
// that an etcd dump reads as kube-apiserver's would.
//
// The server either generates its own configuration at first start
// (Secrets under a new aescbc key, identity last) and may rotate its key
// (Manager), or takes the operator's file (--encryption-provider-config),
// whose keys the operator rotates as upstream documents.
package encryption

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverconfigv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

// The configuration scheme knows the internal EncryptionConfiguration and
// its v1 form, the only version upstream serves it in.
var (
	configScheme = runtime.NewScheme()
	configCodecs = serializer.NewCodecFactory(configScheme)
)

func init() {
	utilruntime.Must(apiserverconfig.AddToScheme(configScheme))
	utilruntime.Must(apiserverconfigv1.AddToScheme(configScheme))
}

// Load reads and checks an EncryptionConfiguration file. Errors name the
// file and, for invalid fields, their paths as upstream reports them.
func Load(path string) (*apiserverconfig.EncryptionConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption provider config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("encryption provider config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes an EncryptionConfiguration (YAML or JSON) and validates
// it as kube-apiserver does at start-up, then refuses what Orca cannot
// do: KMS providers, which need a plugin, and rules an earlier rule masks.
func Parse(data []byte) (*apiserverconfig.EncryptionConfiguration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty")
	}
	obj, gvk, err := configCodecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	cfg, ok := obj.(*apiserverconfig.EncryptionConfiguration)
	if !ok {
		return nil, fmt.Errorf("got %v, want kind EncryptionConfiguration of apiserver.config.k8s.io/v1", gvk)
	}
	if err := validate(cfg).ToAggregate(); err != nil {
		return nil, err
	}
	if _, err := build(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// marshal writes cfg in its v1 form, as an operator would write the file.
func marshal(cfg *apiserverconfig.EncryptionConfiguration) ([]byte, error) {
	out := &apiserverconfigv1.EncryptionConfiguration{}
	if err := configScheme.Convert(cfg, out, nil); err != nil {
		return nil, err
	}
	out.APIVersion, out.Kind = apiserverconfigv1.SchemeGroupVersion.String(), "EncryptionConfiguration"
	info, ok := runtime.SerializerInfoForMediaType(configCodecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		return nil, errors.New("no YAML serializer")
	}
	return runtime.Encode(info.Serializer, out)
}
