package volume

import (
	"fmt"
	"io/fs"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/orca-project/orca/internal/kubelet/fieldpath"
	"github.com/orca-project/orca/internal/kubelet/volume/atomicdir"
)

// defaultMode is the API's default for projected files.
const defaultMode int32 = 0o644

func modeOr(mode *int32, def int32) int32 {
	if mode != nil {
		return *mode
	}
	return def
}

func fileMode(m int32) fs.FileMode { return fs.FileMode(m) & fs.ModePerm }

// configMapData merges a configMap's text and binary data.
func configMapData(cm *v1.ConfigMap) map[string][]byte {
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data
}

// keyedPayload maps the keys of a configMap or secret to files: every key
// under its own name, or only the listed items under their paths. A listed
// key that is missing is an error (missingKey is upstream's message
// prefix) unless the source is optional.
func keyedPayload(data map[string][]byte, items []v1.KeyToPath, mode int32, optional bool, missingKey string) (map[string]atomicdir.File, error) {
	payload := make(map[string]atomicdir.File, len(data))
	if len(items) == 0 {
		for k, v := range data {
			payload[k] = atomicdir.File{Data: v, Mode: fileMode(mode)}
		}
		return payload, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s: %s", missingKey, item.Key)
		}
		payload[item.Path] = atomicdir.File{Data: v, Mode: fileMode(modeOr(item.Mode, mode))}
	}
	return payload, nil
}

func configMapPayload(cm *v1.ConfigMap, items []v1.KeyToPath, mode int32, optional bool) (map[string]atomicdir.File, error) {
	return keyedPayload(configMapData(cm), items, mode, optional, "configmap references non-existent config key")
}

func secretPayload(s *v1.Secret, items []v1.KeyToPath, mode int32, optional bool) (map[string]atomicdir.File, error) {
	return keyedPayload(s.Data, items, mode, optional, "references non-existent secret key")
}

// downwardAPIPayload resolves each item's field or resource reference.
// Every failing item is reported, as upstream aggregates them.
func downwardAPIPayload(pod *v1.Pod, items []v1.DownwardAPIVolumeFile, mode int32, node v1.ResourceList) (map[string]atomicdir.File, error) {
	payload := make(map[string]atomicdir.File, len(items))
	var errs []error
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil:
			value, err = fieldpath.ExtractFieldPath(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			var c *v1.Container
			if c, err = fieldpath.FindContainer(pod, item.ResourceFieldRef.ContainerName); err == nil {
				value, err = fieldpath.ExtractResourceValue(item.ResourceFieldRef, c, node)
			}
		default:
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		payload[filepath.Clean(item.Path)] = atomicdir.File{Data: []byte(value), Mode: fileMode(modeOr(item.Mode, mode))}
	}
	return payload, utilerrors.NewAggregate(errs)
}
