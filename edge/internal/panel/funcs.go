package panel

import (
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"

	"github.com/vros/vros/libs/events/contract"
)

// Field is one form control as the "field" template draws it: a label tied to its input,
// the value, the service's message for it (tied by aria-describedby), a hint.
type Field struct {
	Name, ID, Label, Kind, Value, Error, Hint string
	Options                                   []string
	Required                                  bool
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// field: (view, name, label, kind[, options or hint…]). kind is an input type, "textarea",
	// "select" (options: a comma-separated list, "" first for "not set"), or "yesno".
	"field": func(v view, name, label, kind string, more ...string) Field {
		f := Field{Name: name, ID: "f-" + idOf(name), Label: label, Kind: kind, Value: v.Values[name], Error: v.Errors[name]}
		if i := strings.LastIndexByte(name, '['); f.Error == "" && i > 0 {
			// A violation of the object the field is in (property[space]: is required),
			// which has no input of its own, is shown at its fields.
			f.Error = v.Errors[name[:i]]
		}
		for _, m := range more {
			switch {
			case m == "required":
				f.Required = true
			case strings.HasPrefix(m, "options:"):
				f.Options = strings.Split(strings.TrimPrefix(m, "options:"), ",")
			default:
				f.Hint = m
			}
		}
		return f
	},
	"idOf": idOf,
	// row: a field name in row i of a repeated group ("season", 2, "name" → season[2][name]).
	"row": func(group string, i int, name string) string {
		return group + "[" + strconv.Itoa(i) + "][" + name + "]"
	},
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	},
	"add": func(a, b int) int { return a + b },
	"val": func(v view, name string) string { return v.Values[name] },
	// ticked: a checkbox's state in the form's values ("1").
	"ticked":     func(v view, name string) bool { return v.Values[name] == "1" },
	"adjustment": adjustmentText,
	// cancellationOf: the cancellation fieldset's data (the page's view, the form's prefix,
	// the tier rows).
	"cancellationOf": func(v view, prefix string, rows int) cancellationForm {
		return cancellationForm{View: v, Prefix: prefix, Rows: rows}
	},
	"policy": policyText,
	// lineLabel: how a statement's line reads (its label, else its name).
	"lineLabel": lineLabel,
	"soldOn":    soldOnText,
	// figures writes a JSON object of figures ({"current":1,"created":1}) as "current 1 · created 1".
	"figures": func(raw json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			return string(raw)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %v", k, m[k])
		}
		return strings.Join(parts, " · ")
	},
}

// idOf is an element id made of a field name.
func idOf(name string) string {
	r := strings.NewReplacer("[", "-", "]", "", ".", "-", " ", "-")
	return r.Replace(name)
}

// adjustmentText is a plan's or a markup's adjustment as an owner reads it: "-10 %",
// "+5 per night".
func adjustmentText(a contract.Adjustment) string {
	v := a.Value
	if v != "" && v[0] != '-' && v[0] != '+' {
		v = "+" + v
	}
	if a.Type == contract.AdjustAmount {
		return v + " per night"
	}
	return v + " %"
}

// policyText is a cancellation policy as an owner reads it; nil is the standard plan's
// default, flexible.
func policyText(c *contract.Cancellation) string {
	if c == nil {
		return contract.CancelFlexible
	}
	if c.Policy != contract.CancelCustom {
		return strings.ReplaceAll(c.Policy, "_", "-")
	}
	parts := make([]string, len(c.Tiers))
	for i, t := range c.Tiers {
		parts[i] = fmt.Sprintf("%s %% until %d days before", t.Percent, t.DaysBefore)
	}
	return "custom: " + strings.Join(parts, "; ")
}

// soldOnText says where a derived plan is sold.
func soldOnText(s contract.SoldOn) string {
	var parts []string
	if s.Direct {
		parts = append(parts, "direct")
	}
	if s.AllBrands {
		parts = append(parts, "every brand")
	} else if len(s.Brands) > 0 {
		ids := make([]string, len(s.Brands))
		for i, b := range s.Brands {
			ids[i] = strconv.FormatInt(b, 10)
		}
		parts = append(parts, "brands "+strings.Join(ids, ", "))
	}
	if len(s.Channels) > 0 {
		parts = append(parts, "channels "+strings.Join(s.Channels, ", "))
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, "; ")
}

// cancellationForm is what the "cancellation" template draws.
type cancellationForm struct {
	View   view
	Prefix string
	Rows   int
}
