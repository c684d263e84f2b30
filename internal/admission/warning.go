package admission

import "context"

type warningsKey struct{}

// WithWarnings returns a context whose admission warnings go to add: the
// API server passes its response's warning recorder, so that a plugin's
// warning reaches the client as a Warning header, as upstream's
// warning.AddWarning does.
func WithWarnings(ctx context.Context, add func(text string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, add)
}

// AddWarning hands text to the client of the request in ctx. It does
// nothing for a context without a recorder (writes the server makes for
// itself), so plugins need not know who asked.
func AddWarning(ctx context.Context, text string) {
	if add, ok := ctx.Value(warningsKey{}).(func(string)); ok && text != "" {
		add(text)
	}
}
