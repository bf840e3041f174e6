// Package template is messaging-svc's template language (docs/messaging.md, "Templates"):
// the model of a template, which one a message uses (Choose), the data it sees (Data), its
// rendering, bounded in time and size, with Go's text/template and html/template (Render,
// Preview), the check made before one is saved (Validate) and vros's defaults for every
// trigger. It does no I/O.
package template

import (
	"slices"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// triggers lists every trigger, in the doc's order: package trigger's catalog, whose names
// templates are keyed by.
var triggers = func() []string {
	var out []string
	for _, d := range trigger.Catalog() {
		out = append(out, d.Name)
	}
	return out
}()

// Triggers returns every trigger, in docs/messaging.md's order.
func Triggers() []string { return slices.Clone(triggers) }

// IsTrigger tells whether s names a trigger.
func IsTrigger(s string) bool { return slices.Contains(triggers, s) }

// Fallback is the language of a message whose language has no template.
const Fallback = "en"

// languages vros supports (booking-svc's labels, docs/booking.md "Checkouts").
var languages = []string{"en", "it", "es", "fr", "de", "pt", "nl"}

// Languages returns the languages a template may be written in.
func Languages() []string { return slices.Clone(languages) }

// IsLanguage tells whether s is a language vros supports.
func IsLanguage(s string) bool { return slices.Contains(languages, s) }

// Template is one message's wording: for a trigger, in a language, for the whole account or
// narrowed to a brand and/or a property (0: any). Subject and Text are text/template, HTML is
// html/template; an empty Text is derived from the rendered HTML.
type Template struct {
	Trigger    string
	Language   string
	BrandID    int64
	PropertyID int64
	Subject    string
	HTML       string
	Text       string
}

// Choose picks the template of a message: among the account's templates of the trigger in
// the language asked, the most specific (property and brand › property › brand › account),
// else vros's default in that language; when neither exists, the same in English. A template
// narrowed to another brand or property never applies. ok is false only for an unknown
// trigger (vros has an English default for every trigger).
func Choose(templates []Template, trigName, lang string, brand, property int64) (t Template, ok bool) {
	if !IsTrigger(trigName) {
		return Template{}, false
	}
	for _, l := range []string{lang, Fallback} {
		best, rank := Template{}, 0
		for _, c := range templates {
			if c.Trigger != trigName || c.Language != l {
				continue
			}
			if r := specificity(c, brand, property); r > rank {
				best, rank = c, r
			}
		}
		if rank > 0 {
			return best, true
		}
		if d, ok := Default(trigName, l); ok {
			return d, true
		}
	}
	return Template{}, false
}

// specificity ranks how closely c fits the message (0: it does not apply): property and
// brand 4, property 3, brand 2, account 1.
func specificity(c Template, brand, property int64) int {
	switch {
	case c.BrandID != 0 && c.BrandID != brand, c.PropertyID != 0 && c.PropertyID != property:
		return 0
	case c.PropertyID != 0 && c.BrandID != 0:
		return 4
	case c.PropertyID != 0:
		return 3
	case c.BrandID != 0:
		return 2
	}
	return 1
}
