package storage

import (
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func apiequal(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }
