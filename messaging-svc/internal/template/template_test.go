package template

import (
	"testing"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

func TestChoose(t *testing.T) {
	const brand, prop = 7, 42
	tpl := func(lang string, b, p int64, subject string) Template {
		return Template{Trigger: trigger.BookingConfirmed, Language: lang, BrandID: b, PropertyID: p, Subject: subject}
	}
	all := []Template{
		tpl("it", 0, 0, "account it"),
		tpl("it", brand, 0, "brand it"),
		tpl("it", 0, prop, "property it"),
		tpl("it", brand, prop, "property+brand it"),
		tpl("en", 0, 0, "account en"),
		tpl("de", 9, 0, "other brand de"),
		tpl("de", 0, 99, "other property de"),
		{Trigger: trigger.BookingCancelled, Language: "it", Subject: "cancelled it"},
	}
	enDefault, _ := Default(trigger.BookingConfirmed, "en")
	itDefault, _ := Default(trigger.BookingConfirmed, "it")
	esDefault, _ := Default(trigger.BookingConfirmed, "es")
	deDefault, _ := Default(trigger.BookingConfirmed, "de")
	for _, tc := range []struct {
		name        string
		templates   []Template
		lang        string
		brand, prop int64
		want        string
	}{
		{"property + brand wins over all", all, "it", brand, prop, "property+brand it"},
		{"property over brand", all[:3], "it", brand, prop, "property it"},
		{"brand over account", all[:2], "it", brand, prop, "brand it"},
		{"account when nothing narrower fits", all[:4], "it", 8, 43, "account it"},
		{"another brand's template never applies", all[:2], "it", 8, prop, "account it"},
		{"property template of another property never applies", all[2:3], "it", brand, 43, itDefault.Subject},
		{"no account template: vros's default in the language", nil, "it", brand, prop, itDefault.Subject},
		{"vros's default in the language before the account's English", all[4:5], "it", 0, 0, itDefault.Subject},
		{"every language has vros's default before the account's English", all, "es", brand, prop, esDefault.Subject},
		{"no account template: vros's Spanish", nil, "es", brand, prop, esDefault.Subject},
		{"narrowed templates elsewhere fall to the language's default", all[5:7], "de", 1, 1, deDefault.Subject},
		{"language without default: account's English", all, "xx", brand, prop, "account en"},
		{"language without anything: vros's English", nil, "xx", brand, prop, enDefault.Subject},
		{"narrowed templates of another language: the English default", all[5:7], "xx", 1, 1, enDefault.Subject},
		{"unknown language: English", all, "xx", 0, 0, "account en"},
		{"another trigger's template never applies", all[7:], "it", 0, 0, itDefault.Subject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Choose(tc.templates, trigger.BookingConfirmed, tc.lang, tc.brand, tc.prop)
			if !ok || got.Subject != tc.want {
				t.Fatalf("Choose = %q, %v; want %q", got.Subject, ok, tc.want)
			}
		})
	}
	if _, ok := Choose(all, "booking.exploded", "en", 0, 0); ok {
		t.Fatal("an unknown trigger chose a template")
	}
}

func TestTriggersAndLanguages(t *testing.T) {
	if n := len(Triggers()); n != 14 {
		t.Fatalf("%d triggers, want the doc's 14", n)
	}
	for _, s := range []string{"booking.confirmed", "payment.due_soon", "deposit.released", "stay.arrival", "owner.channel_conflict"} {
		if !IsTrigger(s) {
			t.Errorf("%s is not a trigger", s)
		}
	}
	for _, s := range []string{"en", "it", "es", "fr", "de", "pt", "nl"} {
		if !IsLanguage(s) {
			t.Errorf("%s is not a language", s)
		}
	}
	if IsLanguage("EN") || IsTrigger("") {
		t.Error("case or empty accepted")
	}
}
