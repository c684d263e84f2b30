// Package autoscaling defines autoscaling/v2 HorizontalPodAutoscalers and
// their autoscaling/v1 view: names, defaults, validation, table columns,
// and upstream's conversion between the two versions, which keeps what v1
// cannot express in annotations so that a v1 round trip loses nothing.
package autoscaling
