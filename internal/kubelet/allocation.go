package kubelet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// allocationFile keeps, in a pod's directory, what the kubelet allocated
// and actuated for it, so that a restarted agent neither takes a resize
// that was waiting for room as admitted nor forgets one half done, as
// upstream checkpoints both.
const allocationFile = "resources.json"

// podResources is the kubelet's record of one pod's resources.
type podResources struct {
	// Allocated is what the kubelet admitted for the pod's containers.
	Allocated allocation `json:"allocated"`
	// Actuated is what each container was last given: its resources when
	// it was created, then each in-place update.
	Actuated allocation `json:"actuated"`
	// conditions come back from the pod's own status after a restart.
	conditions resizeConditions
}

// resourceStore holds the records of the pods the kubelet runs.
type resourceStore struct {
	dir  string
	mu   sync.Mutex
	pods map[types.UID]*podResources
}

func newResourceStore(dir string) *resourceStore {
	return &resourceStore{dir: dir, pods: map[types.UID]*podResources{}}
}

func (s *resourceStore) path(uid types.UID) string {
	return filepath.Join(s.dir, string(uid), allocationFile)
}

// ensure returns the pod's allocation, starting its record if there is
// none: from the pod's file, or else (a pod seen for the first time, or
// running since before the kubelet kept records) from its spec, every
// container taken to run with what it asks.
func (s *resourceStore) ensure(pod *v1.Pod) allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pods[pod.UID]
	if !ok {
		r = &podResources{}
		if b, err := os.ReadFile(s.path(pod.UID)); err != nil || json.Unmarshal(b, r) != nil || r.Allocated == nil {
			r = &podResources{Allocated: specAllocation(pod), Actuated: specAllocation(pod)}
			s.save(pod.UID, r)
		}
		if r.Actuated == nil {
			r.Actuated = allocation{}
		}
		r.conditions = backfillResize(pod.Status.Conditions)
		s.pods[pod.UID] = r
	}
	return copyAllocation(r.Allocated)
}

// allocated returns a pod's allocation, if the kubelet has one.
func (s *resourceStore) allocated(uid types.UID) (allocation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pods[uid]
	if !ok {
		return nil, false
	}
	return copyAllocation(r.Allocated), true
}

func (s *resourceStore) setAllocated(uid types.UID, a allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pods[uid]; ok {
		r.Allocated = copyAllocation(a)
		s.save(uid, r)
	}
}

// actuated returns what the pod's containers were last given.
func (s *resourceStore) actuated(uid types.UID) allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pods[uid]; ok {
		return copyAllocation(r.Actuated)
	}
	return nil
}

func (s *resourceStore) setActuated(uid types.UID, name string, res v1.ResourceRequirements) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pods[uid]; ok {
		r.Actuated[name] = *res.DeepCopy()
		s.save(uid, r)
	}
}

// updateConditions changes a pod's resize conditions with f and returns
// what f returns.
func (s *resourceStore) updateConditions(uid types.UID, f func(*resizeConditions) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pods[uid]
	if !ok {
		return false
	}
	return f(&r.conditions)
}

func (s *resourceStore) conditions(uid types.UID) []v1.PodCondition {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pods[uid]; ok {
		return r.conditions.list()
	}
	return nil
}

// pending lists the pods whose resize waits for room.
func (s *resourceStore) pending() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []types.UID
	for uid, r := range s.pods {
		if r.conditions.Pending != nil {
			out = append(out, uid)
		}
	}
	return out
}

func (s *resourceStore) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, uid)
}

// save writes a record atomically; a failure only costs the record after
// a restart, when the spec stands in for it.
func (s *resourceStore) save(uid types.UID, r *podResources) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	p := s.path(uid)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}

func copyAllocation(a allocation) allocation {
	if a == nil {
		return nil
	}
	out := make(allocation, len(a))
	for k, v := range a {
		out[k] = *v.DeepCopy()
	}
	return out
}
