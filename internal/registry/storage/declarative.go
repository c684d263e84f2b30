package storage

import "k8s.io/apimachinery/pkg/util/validation/field"

// withDeclarative returns what upstream answers when its handwritten
// validation meets the rules k8s.io/api states as beta declarative tags,
// which upstream enforces by default since 1.36
// (DeclarativeValidationBeta): each handwritten error marked as covered
// gives way to a declarative error of the same type, origin and field,
// and the declarative errors come last, with their own messages.
func withDeclarative(handwritten, declarative field.ErrorList) field.ErrorList {
	if len(declarative) == 0 {
		return handwritten
	}
	matcher := field.ErrorMatcher{}.ByType().ByOrigin().RequireOriginWhenInvalid().ByField()
	var out field.ErrorList
	for _, e := range handwritten {
		covered := false
		if e.CoveredByDeclarative {
			for _, d := range declarative {
				if matcher.Matches(e, d) {
					covered = true
					break
				}
			}
		}
		if !covered {
			out = append(out, e)
		}
	}
	return append(out, declarative...)
}
