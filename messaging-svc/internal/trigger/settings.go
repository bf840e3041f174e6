package trigger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vros/vros/libs/pricing"
)

// MaxDays bounds a scheduled trigger's offset: two months either side of the stay.
const MaxDays = 60

// ErrInvalid is what every FieldError wraps: a setting that breaks a rule (a 400).
var ErrInvalid = errors.New("invalid trigger setting")

// FieldError names the field that breaks a rule (`stay.arrival.days`) and the rule.
type FieldError struct {
	Field string
	Rule  string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Rule }
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Setting is one trigger's setting for an account. Days and At only mean something for a
// scheduled trigger.
type Setting struct {
	Enabled bool
	Days    int
	At      pricing.Clock // the local time of day
}

// Settings are an account's settings for every trigger; the zero Settings are the defaults
// (every trigger on, the offsets and times of the catalog).
type Settings struct {
	set map[string]Setting // only the triggers changed from the defaults
}

// Default answers the catalog's setting of a trigger (every trigger on).
func Default(d Def) Setting {
	s := Setting{Enabled: true, Days: d.DefaultDays}
	if d.Scheduled() {
		at, err := pricing.ParseClock(d.DefaultAt)
		if err != nil {
			panic("trigger: catalog time of " + d.Name + ": " + err.Error())
		}
		s.At = at
	}
	return s
}

// For answers the setting of the trigger named name (the default if the account left it).
// An unknown name answers a disabled setting.
func (s Settings) For(name string) Setting {
	if v, ok := s.set[name]; ok {
		return v
	}
	d, ok := Lookup(name)
	if !ok {
		return Setting{}
	}
	return Default(d)
}

// Change is one trigger's change as an account sends it: nil fields keep the current value.
// At is HH:MM.
type Change struct {
	Trigger string
	Enabled *bool
	Days    *int
	At      *string
}

// With answers the settings with the changes applied, or the first rule broken as a
// *FieldError (nothing applied): an unknown trigger (`trigger`), the same trigger twice, an
// offset or time on an event trigger, days outside 0..MaxDays, a time not HH:MM.
func (s Settings) With(changes ...Change) (Settings, error) {
	out := Settings{set: make(map[string]Setting, len(s.set)+len(changes))}
	for k, v := range s.set {
		out.set[k] = v
	}
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		d, ok := Lookup(c.Trigger)
		if !ok {
			return s, &FieldError{Field: "trigger", Rule: fmt.Sprintf("%q is not a trigger (%s)", c.Trigger, names())}
		}
		if seen[c.Trigger] {
			return s, &FieldError{Field: c.Trigger, Rule: "is given twice"}
		}
		seen[c.Trigger] = true
		v := out.For(c.Trigger)
		if c.Enabled != nil {
			v.Enabled = *c.Enabled
		}
		if c.Days != nil {
			if !d.Scheduled() {
				return s, &FieldError{Field: c.Trigger + ".days", Rule: "is only for scheduled triggers"}
			}
			if *c.Days < 0 || *c.Days > MaxDays {
				return s, &FieldError{Field: c.Trigger + ".days", Rule: fmt.Sprintf("must be 0 to %d", MaxDays)}
			}
			v.Days = *c.Days
		}
		if c.At != nil {
			if !d.Scheduled() {
				return s, &FieldError{Field: c.Trigger + ".time", Rule: "is only for scheduled triggers"}
			}
			at, err := pricing.ParseClock(*c.At)
			if err != nil || strings.TrimSpace(*c.At) != *c.At || len(*c.At) != 5 {
				return s, &FieldError{Field: c.Trigger + ".time", Rule: pricing.ClockRule}
			}
			v.At = at
		}
		out.set[c.Trigger] = v
	}
	return out, nil
}

// Entry is one trigger with its setting, as the settings resource lists them.
type Entry struct {
	Def
	Setting
}

// All answers every trigger of the catalog with its setting, in catalog order.
func (s Settings) All() []Entry {
	out := make([]Entry, 0, len(catalog))
	for _, d := range catalog {
		out = append(out, Entry{Def: d, Setting: s.For(d.Name)})
	}
	return out
}

func names() string {
	n := make([]string, len(catalog))
	for i, d := range catalog {
		n[i] = d.Name
	}
	return strings.Join(n, ", ")
}
