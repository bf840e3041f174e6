// Package faults lets tests stop a change at a named step, as if the process died there.
// A request's context carries the hook; in production there is none and At does nothing.
package faults

import "context"

type key struct{}

// Hook is called at each step a change passes. A test's hook may block forever (the process
// "died" at that step); it must never let the change go on after the test "restarted" it.
type Hook func(step string)

// With returns ctx carrying h (ctx itself when h is nil).
func With(ctx context.Context, h Hook) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, h)
}

// At reports that the change of ctx has reached step.
func At(ctx context.Context, step string) {
	if h, ok := ctx.Value(key{}).(Hook); ok {
		h(step)
	}
}
