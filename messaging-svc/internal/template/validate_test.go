package template

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

func TestValidateRefuses(t *testing.T) {
	ok := Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "Hi {{.Guest.FirstName}}", HTML: "<p>{{.Property.Name}}</p>"}
	with := func(f func(*Template)) Template { c := ok; f(&c); return c }
	for _, tc := range []struct {
		name  string
		tpl   Template
		field string
		line  int
		msg   string // a part of the message
	}{
		{"unknown trigger → template.trigger", with(func(t *Template) { t.Trigger = "booking.exploded" }), FieldTrigger, 0, "must be one of booking.confirmed"},
		{"unknown language → template.language", with(func(t *Template) { t.Language = "xx" }), FieldLanguage, 0, "must be one of en, it"},
		{"empty subject → template.subject", with(func(t *Template) { t.Subject = " " }), FieldSubject, 0, "is required"},
		{"empty html → template.html", with(func(t *Template) { t.HTML = "" }), FieldHTML, 0, "is required"},
		{"unclosed action in html, line 3", with(func(t *Template) { t.HTML = "<p>\nhello\n{{.Guest.FirstName" }), FieldHTML, 3, "unclosed action"},
		{"unclosed if in html", with(func(t *Template) { t.HTML = "<p>{{if .Guest.FirstName}}x</p>" }), FieldHTML, 1, "unexpected EOF"},
		{"unknown function in html, line 2", with(func(t *Template) { t.HTML = "<p>\n{{shout .Guest.FirstName}}</p>" }), FieldHTML, 2, `function "shout" not defined`},
		{"unknown function in subject", with(func(t *Template) { t.Subject = "{{exec .Guest.FirstName}}" }), FieldSubject, 1, `function "exec" not defined`},
		{"bad field in html, line 2", with(func(t *Template) { t.HTML = "<p>\n{{.Guest.Passport}}</p>" }), FieldHTML, 2, "can't evaluate field Passport"},
		{"bad field in text, line 4", with(func(t *Template) { t.Text = "a\nb\nc\n{{.Booking.Secret}}" }), FieldText, 4, "can't evaluate field Secret"},
		{"bad field in subject", with(func(t *Template) { t.Subject = "{{.Property.Owner}}" }), FieldSubject, 1, "can't evaluate field Owner"},
		{"a method call on data", with(func(t *Template) { t.HTML = "{{.Guest.FirstName.Len}}" }), FieldHTML, 1, "can't evaluate field Len"},
		{"money of a name", with(func(t *Template) { t.HTML = "{{money .Guest.FirstName .Booking.Currency}}" }), FieldHTML, 1, `money: "Giulia" is not an amount`},
		{"date of a time", with(func(t *Template) { t.HTML = "\n{{date .Property.CheckinTime}}" }), FieldHTML, 2, `date: "15:00" is not a date`},
		{"wrong argument count", with(func(t *Template) { t.HTML = "{{money .Booking.GrandTotal}}" }), FieldHTML, 1, "wrong number of args for money"},
		{"index of a missing payment (bare booking)", with(func(t *Template) { t.HTML = "{{(index .Booking.Payments 0).Amount}}" }), FieldHTML, 1, "index out of range"},
		{"call refused", with(func(t *Template) { t.HTML = "\n\n{{call .Guest.FirstName}}" }), FieldHTML, 3, `function "call" is not allowed`},
		{"printf refused", with(func(t *Template) { t.Text = `{{printf "%999999999d" 1}}` }), FieldText, 1, `function "printf" is not allowed`},
		{"define refused", with(func(t *Template) { t.HTML = `{{define "x"}}a{{end}}b` }), FieldHTML, 0, "sub-templates"},
		{"template refused", with(func(t *Template) { t.Text = "\n{{template \"x\"}}" }), FieldText, 2, "sub-templates are not allowed"},
		{"range over a number refused", with(func(t *Template) { t.HTML = "{{range 1000000000}}{{end}}" }), FieldHTML, 1, "range over a number"},
		{"range over a number of the booking refused", with(func(t *Template) { t.Text = "\n{{range .Booking.Nights}}x{{end}}" }), FieldText, 2, "range over a number"},
		{"range over a number through $ refused", with(func(t *Template) {
			t.HTML = "{{range .Booking.Payments}}{{range $.Booking.Adults}}{{end}}{{end}}"
		}), FieldHTML, 1, "range over a number"},
		{"range over a tier's days refused", with(func(t *Template) {
			t.HTML = "{{range .Booking.CancellationPolicy.Tiers}}{{range (.DaysBefore)}}{{end}}{{end}}"
		}), FieldHTML, 1, "range over a number"},
		{"range over a function's result refused", with(func(t *Template) { t.HTML = "{{range (len .Booking.Payments)}}{{end}}" }), FieldHTML, 1, "range over a number, a variable or a function's result"},
		{"range over a variable refused", with(func(t *Template) { t.HTML = "{{$n := .Booking.Nights}}{{range $n}}{{end}}" }), FieldHTML, 1, "range over a number, a variable or a function's result"},
		{"ranges nested 4 deep refused", with(func(t *Template) {
			t.HTML = "{{range .Booking.Payments}}{{range .}}{{range .}}\n{{range .}}{{end}}{{end}}{{end}}{{end}}"
		}), FieldHTML, 2, "nested deeper than 3"},
		{"html in a non-text context", with(func(t *Template) { t.HTML = "<a href='{{.Brand.Website}}" }), FieldHTML, 0, "ends in a non-text context"},
		{"source over 64 KiB", with(func(t *Template) { t.HTML = strings.Repeat("x", MaxSource+1) }), FieldHTML, 0, "longer than 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.tpl)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v; want a *FieldError", err)
			}
			if fe.Field != tc.field || fe.Line != tc.line || !strings.Contains(fe.Message, tc.msg) {
				t.Fatalf("got %s %d %q; want %s %d containing %q", fe.Field, fe.Line, fe.Message, tc.field, tc.line, tc.msg)
			}
			if strings.HasPrefix(fe.Message, "template:") {
				t.Errorf("message keeps Go's location prefix: %q", fe.Message)
			}
		})
	}
	if err := Validate(ok); err != nil {
		t.Fatalf("a good template refused: %v", err)
	}
}

func TestFieldErrorText(t *testing.T) {
	err := Validate(Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "s", HTML: "<p>\n{{.Guest.Nope}}</p>"})
	want := `template.html: line 2: executing "html" at <.Guest.Nope>: can't evaluate field Nope in type template.Guest`
	if err == nil || err.Error() != want {
		t.Fatalf("error %q\nwant  %q", err, want)
	}
}

// TestDefaults: every trigger has vros's default in English and Italian, each passes
// Validate and renders its sample in full: no "<no value>", no action left, the stay's
// dates, the property and the sign-off there, and a text part.
func TestDefaults(t *testing.T) {
	if _, err := defaults(); err != nil {
		t.Fatal(err)
	}
	money := map[string]string{"en": "€1,452.50", "it": "1.452,50\u00a0€", "es": "1.452,50\u00a0€", "fr": "1\u00a0452,50\u00a0€",
		"de": "1.452,50\u00a0€", "pt": "1.452,50\u00a0€", "nl": "€\u00a01.452,50"}
	checkout := map[string]string{"en": "Friday 17 July 2026", "it": "venerdì 17 luglio 2026", "es": "viernes 17 de julio de 2026",
		"fr": "vendredi 17 juillet 2026", "de": "Freitag, 17. Juli 2026", "pt": "sexta-feira, 17 de julho de 2026", "nl": "vrijdag 17 juli 2026"}
	// Every language vros supports has a default for every trigger (docs/messaging.md).
	for _, lang := range Languages() {
		for _, tr := range Triggers() {
			t.Run(lang+"/"+tr, func(t *testing.T) {
				tpl, ok := Default(tr, lang)
				if !ok {
					t.Fatal("no default")
				}
				if err := Validate(tpl); err != nil {
					t.Fatalf("refused: %v", err)
				}
				for _, d := range []Data{Sample(tr, lang), bare(tr, lang)} {
					r, err := Render(context.Background(), tpl, d)
					if err != nil {
						t.Fatal(err)
					}
					for part, s := range map[string]string{"subject": r.Subject, "html": r.HTML, "text": r.Text} {
						if strings.Contains(s, "<no value>") || strings.Contains(s, "{{") || strings.TrimSpace(s) == "" {
							t.Errorf("%s: %q", part, s)
						}
					}
					if !strings.Contains(r.Subject+r.Text, "Casa del Limone") {
						t.Errorf("neither subject nor text names the property")
					}
					if strings.Contains(r.Text, "<") {
						t.Errorf("text part has markup:\n%s", r.Text)
					}
				}
				r, _ := Render(context.Background(), tpl, Sample(tr, lang))
				if tr != trigger.StayThanks && tr != trigger.DepositHeld && tr != trigger.DepositReleased && tr != trigger.PaymentFailed && tr != trigger.PaymentReceived && tr != trigger.PaymentDueSoon && tr != trigger.StayCheckout && !strings.Contains(r.Text, money[lang]) && !strings.Contains(r.Text, checkout[lang]) {
					t.Errorf("the text shows neither the total nor the check-out:\n%s", r.Text)
				}
			})
		}
	}
	// No language's defaults are another's: each trigger's body differs from every other
	// language's (a subject may coincide: "Reserva 42 cancelada" is Spanish and Portuguese).
	for _, tr := range Triggers() {
		seen := map[string]string{}
		for _, lang := range Languages() {
			d, _ := Default(tr, lang)
			if other, ok := seen[d.HTML]; ok {
				t.Errorf("%s: %s is %s", tr, lang, other)
			}
			seen[d.HTML] = lang
		}
	}
}

// TestConfirmationContent: the confirmation a guest gets shows the stay, the guests, the
// total, what is paid and due, the schedule and the cancellation policy.
func TestConfirmationContent(t *testing.T) {
	for lang, wants := range map[string][]string{
		"en": {"Dear Giulia,", "Friday 10 July 2026, from 15:00", "Friday 17 July 2026, by 10:00", "2 adults, 1 child",
			"Total: €1,452.50", "Paid so far: €435.75", "Balance due: €1,016.75", "Wednesday 10 June 2026: €1,016.75",
			"Cancellation policy (moderate)", "Cancelled 30 days or more before arrival: 100% of the total refunded",
			"Cancelled later: no refund", "damage deposit of €300.00", "Via Positanesi d'America 14, 84017 Positano",
			"Warm regards,\nAmalfi Coast Villas\nhttps://www.amalficoastvillas.example\n"},
		"it": {"Gentile Giulia,", "venerdì 10 luglio 2026, dalle 15:00", "2 adulti, 1 bambino", "Totale: 1.452,50\u00a0€",
			"Già pagato: 435,75\u00a0€", "Condizioni di cancellazione (moderate)",
			"Cancellazione almeno 14 giorni prima dell'arrivo: rimborso del 50% del totale"},
	} {
		tpl, _ := Default(trigger.BookingConfirmed, lang)
		r, err := Render(context.Background(), tpl, Sample(trigger.BookingConfirmed, lang))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s confirmation lacks %q:\n%s", lang, w, r.Text)
			}
		}
	}
	tpl, _ := Default(trigger.BookingConfirmed, "en")
	r, _ := Render(context.Background(), tpl, bare(trigger.BookingConfirmed, "en"))
	if !strings.Contains(r.Text, "This booking is non-refundable.") || strings.Contains(r.Text, "damage deposit") {
		t.Errorf("bare confirmation:\n%s", r.Text)
	}
}

func TestCancellationShowsRefund(t *testing.T) {
	tpl, _ := Default(trigger.BookingCancelled, "en")
	for status, want := range map[string]string{
		"pending":   "The refund is on its way",
		"succeeded": "The refund has been issued",
		"failed":    "We could not send the refund automatically",
		"none":      "no refund is due",
	} {
		d := Sample(trigger.BookingCancelled, "en")
		d.Booking.Refund.Status = status
		r, err := Render(context.Background(), tpl, d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text, want) || (status != "none" && !strings.Contains(r.Text, "Refund: €435.75 (100% under the cancellation policy)")) {
			t.Errorf("%s:\n%s", status, r.Text)
		}
	}
}

// TestRangeAllowed: the ranges templates need pass the check.
func TestRangeAllowed(t *testing.T) {
	for _, html := range []string{
		"{{range .Booking.Payments}}{{.Amount}}{{end}}",
		"{{range $i, $p := .Booking.Schedule}}{{$i}}{{$p.DueDate}}{{end}}",
		"{{with .Booking.CancellationPolicy.Tiers}}{{range .}}{{.Percent}}{{end}}{{end}}",
		"{{range .Booking.Payments}}{{range $.Booking.Schedule}}{{range $.Booking.CancellationPolicy.Tiers}}.{{end}}{{end}}{{end}}",
		"{{range (.Booking.Payments)}}{{break}}{{else}}none{{end}}",
	} {
		if err := Validate(Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "s", HTML: html}); err != nil {
			t.Errorf("%s: %v", html, err)
		}
	}
}
