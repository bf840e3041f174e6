package events

// WithPhaseHook returns o whose consumer calls h as its loop enters each phase ("fetch",
// "apply", "commit"; see ConsumerOptions.phase), so that a test stops it in the phase it
// chooses.
func WithPhaseHook(o ConsumerOptions, h func(phase string)) ConsumerOptions {
	o.phase = h
	return o
}
