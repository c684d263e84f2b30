package podstatus

import "k8s.io/apimachinery/pkg/api/resource"

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
