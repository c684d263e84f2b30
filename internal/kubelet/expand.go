package kubelet

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// expand replaces $(NAME) with the value of an environment variable
// defined before, as upstream: $$ escapes a dollar, and a reference to an
// unknown name is left as written.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(in []string, vars map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

func qosClass(pod *v1.Pod) v1.PodQOSClass { return podstatus.QOSClass(pod) }
