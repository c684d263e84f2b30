package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const cronJobManifest = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          nodeName: fake-node
          restartPolicy: Never
          containers:
          - name: tick
            image: busybox
`

func TestCronJobKubectlCreateJobFrom(t *testing.T) {
	ns := newNamespace(t, client, "cj-from")
	fakeKubelet(t, ns, func(*corev1.Pod) corev1.PodPhase { return corev1.PodSucceeded })
	mustKubectl(t, cronJobManifest, "apply", "-n", ns, "-f", "-")
	mustKubectl(t, "", "create", "job", "manual", "-n", ns, "--from=cronjob/tick")
	j := getJob(t, ns, "manual")
	cj, err := client.BatchV1().CronJobs(ns).Get(context.Background(), "tick", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(j, cj) || j.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" {
		t.Errorf("job owners %v annotations %v", j.OwnerReferences, j.Annotations)
	}
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=complete", "job/manual", "--timeout=60s")
}

// TestCronJobSchedulesOnTheMinute waits for the real clock: a "*/1" CronJob
// must start a Job within about a minute, named after its scheduled minute.
func TestCronJobSchedulesOnTheMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("waits up to a minute for the schedule")
	}
	ns := newNamespace(t, client, "cj-tick")
	fakeKubelet(t, ns, func(*corev1.Pod) corev1.PodPhase { return corev1.PodSucceeded })
	mustKubectl(t, cronJobManifest, "apply", "-n", ns, "-f", "-")
	var job batchv1.Job
	eventually(t, 75*time.Second, func() error {
		jobs, err := client.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(jobs.Items) == 0 {
			return fmt.Errorf("no job yet")
		}
		job = jobs.Items[0]
		return nil
	})
	ts, err := time.Parse(time.RFC3339, job.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	if err != nil {
		t.Fatalf("scheduled timestamp annotation: %v", err)
	}
	if want := fmt.Sprintf("tick-%d", ts.Unix()/60); job.Name != want || ts.Second() != 0 {
		t.Errorf("job %s scheduled at %v, want name %s", job.Name, ts, want)
	}
	eventually(t, 30*time.Second, func() error {
		cj, err := client.BatchV1().CronJobs(ns).Get(context.Background(), "tick", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cj.Status.LastScheduleTime == nil || !cj.Status.LastScheduleTime.Time.Equal(ts) {
			return fmt.Errorf("lastScheduleTime = %v", cj.Status.LastScheduleTime)
		}
		if cj.Status.LastSuccessfulTime == nil {
			return fmt.Errorf("lastSuccessfulTime not set; active %v", cj.Status.Active)
		}
		return nil
	})
	eventually(t, 10*time.Second, func() error {
		evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind == "CronJob" && e.Reason == "SuccessfulCreate" && strings.HasPrefix(e.Message, "Created job tick-") &&
				e.Source.Component == "cronjob-controller" {
				return nil
			}
		}
		return fmt.Errorf("no SuccessfulCreate event from cronjob-controller")
	})
}
