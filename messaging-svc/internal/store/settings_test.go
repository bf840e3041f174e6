package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/messaging-svc/internal/mail"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

func openSettings(t *testing.T) *Settings {
	t.Helper()
	s, err := NewSettings(context.Background(), testDB)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func settingsPtr[T any](v T) *T { return &v }

func TestSettingsDefaults(t *testing.T) {
	s := openSettings(t)
	acc := templatesAccount("defaults")
	got, err := s.Get(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Account != acc || got.Version != 0 || got.SMTP != nil || got.FromAddress != "" || len(got.Notify) != 0 {
		t.Fatalf("defaults: %+v", got)
	}
	for _, e := range got.Triggers.All() {
		if e.Setting != trigger.Default(e.Def) {
			t.Errorf("%s: %+v, want the catalog's default", e.Name, e.Setting)
		}
	}
	// An account with templates but no settings saved: its template counter is no setting.
	tpls := openTemplates(t)
	if _, err := tpls.Create(context.Background(), acc, templatesArrival("en", 0, 0), time.Now()); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Get(context.Background(), acc); err != nil || again.Version != 0 || again.SMTP != nil {
		t.Fatalf("settings of an account with a template: %+v, %v", again, err)
	}
}

func TestSettingsTriggers(t *testing.T) {
	ctx := context.Background()
	s := openSettings(t)
	acc := templatesAccount("triggers")
	ts, err := trigger.Settings{}.With(
		trigger.Change{Trigger: trigger.StayArrival, Days: settingsPtr(5), At: settingsPtr("08:30")},
		trigger.Change{Trigger: trigger.BookingModified, Enabled: settingsPtr(false)},
		trigger.Change{Trigger: trigger.StayThanks, Enabled: settingsPtr(true)}, // the default: not stored
	)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := s.SetTriggers(ctx, acc, ts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, acc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || saved.Version != 1 {
		t.Fatalf("version %d (saved %d), want 1", got.Version, saved.Version)
	}
	if fmt.Sprint(got.Triggers.All()) != fmt.Sprint(ts.All()) {
		t.Fatalf("triggers read back:\n%v\nwant\n%v", got.Triggers.All(), ts.All())
	}
	if a := got.Triggers.For(trigger.StayArrival); a.Days != 5 || a.At.String() != "08:30" || !a.Enabled {
		t.Fatalf("stay.arrival: %+v", a)
	}
	if got.Triggers.For(trigger.BookingModified).Enabled {
		t.Fatal("booking.modified still on")
	}
	// Back to the defaults: nothing stored, the defaults read.
	if _, err := s.SetTriggers(ctx, acc, trigger.Settings{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, acc)
	if got.Version != 2 || !got.Triggers.For(trigger.BookingModified).Enabled || got.Triggers.For(trigger.StayArrival).Days != 3 {
		t.Fatalf("after the defaults were saved: %+v", got)
	}
}

func TestSettingsDelivery(t *testing.T) {
	ctx := context.Background()
	s := openSettings(t)
	box, err := seal.New(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	acc := templatesAccount("delivery")
	ts, _ := trigger.Settings{}.With(trigger.Change{Trigger: trigger.StayThanks, Enabled: settingsPtr(false)})
	if _, err := s.SetTriggers(ctx, acc, ts, time.Now()); err != nil {
		t.Fatal(err)
	}
	sealed := SealSMTPPassword(box, acc, "s3cret")
	got, err := s.SetDelivery(ctx, acc, Delivery{FromName: "Villa Aurora", FromAddress: "stay@aurora.example", ReplyTo: "desk@aurora.example",
		Notify: []string{"owner@aurora.example", "ops@aurora.example"},
		SMTP:   &SMTPSettings{Host: "smtp.aurora.example", Port: 587, Username: "stay", Password: sealed, TLS: mail.TLSStartTLS}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.FromName != "Villa Aurora" || got.FromAddress != "stay@aurora.example" || got.ReplyTo != "desk@aurora.example" ||
		!slices.Equal(got.Notify, []string{"owner@aurora.example", "ops@aurora.example"}) || got.Version != 2 {
		t.Fatalf("saved %+v", got)
	}
	if got.Triggers.For(trigger.StayThanks).Enabled {
		t.Fatal("a delivery change lost the triggers' settings")
	}
	if got.SMTP == nil || got.SMTP.Host != "smtp.aurora.example" || got.SMTP.Port != 587 || got.SMTP.TLS != mail.TLSStartTLS || got.SMTP.Username != "stay" {
		t.Fatalf("smtp %+v", got.SMTP)
	}
	if strings.Contains(string(got.SMTP.Password), "s3cret") {
		t.Fatal("the password is stored in clear")
	}
	if p, err := OpenSMTPPassword(box, acc, got.SMTP.Password); err != nil || p != "s3cret" {
		t.Fatalf("open: %q, %v", p, err)
	}
	// Bound to the account: it does not open for another.
	if _, err := OpenSMTPPassword(box, acc+"-other", got.SMTP.Password); err == nil {
		t.Fatal("the sealed password opens for another account")
	}

	// A change without the password keeps it; the server changes.
	got, err = s.SetDelivery(ctx, acc, Delivery{FromAddress: "stay@aurora.example",
		SMTP: &SMTPSettings{Host: "mail.aurora.example", Port: 465, TLS: mail.TLSImplicit}, KeepPassword: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.SMTP == nil || got.SMTP.Host != "mail.aurora.example" || got.SMTP.Port != 465 || got.SMTP.Username != "" || got.FromName != "" || len(got.Notify) != 0 {
		t.Fatalf("after a change keeping the password: %+v %+v", got, got.SMTP)
	}
	if p, _ := OpenSMTPPassword(box, acc, got.SMTP.Password); p != "s3cret" {
		t.Fatalf("the password kept is %q", p)
	}
	// A cleared password: none stored.
	got, _ = s.SetDelivery(ctx, acc, Delivery{SMTP: &SMTPSettings{Host: "mail.aurora.example", Port: 25, TLS: mail.TLSNone}}, time.Now())
	if got.SMTP == nil || len(got.SMTP.Password) != 0 {
		t.Fatalf("after the password was cleared: %+v", got.SMTP)
	}
	// The operator's transport: the server dropped. Keeping a password with none stored
	// creates the server without one.
	got, _ = s.SetDelivery(ctx, acc, Delivery{}, time.Now())
	if got.SMTP != nil {
		t.Fatalf("after smtp null: %+v", got.SMTP)
	}
	got, err = s.SetDelivery(ctx, acc, Delivery{SMTP: &SMTPSettings{Host: "h.example", Port: 2525, TLS: mail.TLSNone}, KeepPassword: true}, time.Now())
	if err != nil || got.SMTP == nil || got.SMTP.Host != "h.example" || len(got.SMTP.Password) != 0 {
		t.Fatalf("a server with no password to keep: %+v, %v", got.SMTP, err)
	}

	// Erase: the defaults again.
	if err := s.Erase(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, acc); got.Version != 0 || got.SMTP != nil {
		t.Fatalf("after erasure: %+v", got)
	}
}

// TestSettingsConcurrent: trigger and delivery changes of one account at once lose neither;
// each account reads its own.
func TestSettingsConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openSettings(t)
	const n = 6
	accs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		accs[i] = templatesAccount(fmt.Sprintf("conc%d", i))
		wg.Add(2)
		go func() {
			defer wg.Done()
			ts, _ := trigger.Settings{}.With(trigger.Change{Trigger: trigger.StayArrival, Days: settingsPtr(i)})
			if _, err := s.SetTriggers(ctx, accs[i], ts, time.Now()); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.SetDelivery(ctx, accs[i], Delivery{FromName: accs[i]}, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, acc := range accs {
		got, err := s.Get(ctx, acc)
		if err != nil || got.Version != 2 || got.FromName != acc || got.Triggers.For(trigger.StayArrival).Days != i {
			t.Errorf("%s: %+v, %v", acc, got, err)
		}
	}
}
