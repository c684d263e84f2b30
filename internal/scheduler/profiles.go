package scheduler

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/orca-project/orca/internal/scheduler/framework"
	"github.com/orca-project/orca/internal/scheduler/profile"
	"github.com/orca-project/orca/internal/scheduler/schedconfig"
)

// schedProfile is one profile at run time: its framework, whether it
// preempts, and the recorder that signs its events with its name.
type schedProfile struct {
	fw       *framework.Framework
	preempt  bool
	recorder record.EventRecorder
}

// configuration is the configuration in force: the file's, or the
// default profile with the percentage given in Config.
func (c *Config) configuration() *configv1.KubeSchedulerConfiguration {
	if c.Configuration != nil {
		return c.Configuration
	}
	cfg := schedconfig.Default()
	pct := int32(c.PercentageOfNodesToScore)
	cfg.PercentageOfNodesToScore = &pct
	return cfg
}

// buildProfiles builds one framework per profile; the first profile's
// recorder also signs the Lease's events.
func (s *Scheduler) buildProfiles(cfg *configv1.KubeSchedulerConfiguration) error {
	built, err := profile.Build(cfg, s.volumes)
	if err != nil {
		return err
	}
	s.profiles = make(map[string]*schedProfile, len(built))
	for i, p := range built {
		rec := s.events.NewRecorder(schemeForEvents(), v1.EventSource{Component: p.Name})
		s.profiles[p.Name] = &schedProfile{fw: p.Framework, preempt: p.Preemption && !s.cfg.DisablePreemption, recorder: rec}
		if i == 0 {
			s.recorder = rec
		}
		if len(p.Noop) > 0 {
			s.log.Info("profile enables plugins this scheduler does not implement; they have no effect", "profile", p.Name, "plugins", p.Noop)
		}
	}
	return nil
}

// profileFor is the profile serving the pod; nil when no profile serves
// its schedulerName.
func (s *Scheduler) profileFor(p *v1.Pod) *schedProfile { return s.profiles[p.Spec.SchedulerName] }

// frameworkFor, recorderFor and preemptionFor read the pod's profile,
// which exists for every pod in the queue (responsible admits no other).
func (s *Scheduler) frameworkFor(p *v1.Pod) *framework.Framework { return s.profileFor(p).fw }

func (s *Scheduler) recorderFor(p *v1.Pod) record.EventRecorder {
	if prof := s.profileFor(p); prof != nil {
		return prof.recorder
	}
	return s.recorder
}

func (s *Scheduler) preemptionFor(p *v1.Pod) bool { return s.profileFor(p).preempt }
