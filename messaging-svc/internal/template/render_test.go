package template

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

const script = `<script>alert(1)</script>`

// TestGuestScriptEscaped: a `<script>` in every field a guest (or a channel) can write
// arrives escaped in the HTML part and as written in the subject and text parts.
func TestGuestScriptEscaped(t *testing.T) {
	d := Sample(trigger.OwnerBooking, "en")
	d.Guest = Guest{FirstName: script, LastName: script, FullName: script, Email: script, Phone: script, Language: script}
	tpl := Template{Trigger: trigger.OwnerBooking, Language: "en",
		Subject: `New booking for {{.Guest.FullName}}`,
		HTML: `<p>{{.Guest.FirstName}} {{.Guest.LastName}} {{.Guest.FullName}}</p><p title="{{.Guest.Email}}">{{.Guest.Phone}}</p>` +
			`<a href="{{.Guest.Email}}">{{.Guest.Language}}</a><script>var g = {{.Guest.FirstName}};</script>`,
		Text: `{{.Guest.FirstName}} {{.Guest.LastName}} {{.Guest.FullName}} {{.Guest.Email}} {{.Guest.Phone}} {{.Guest.Language}}`}
	r, err := Render(context.Background(), tpl, d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.HTML, "<script>alert") || strings.Contains(r.HTML, "</script>\u003c") {
		t.Fatalf("HTML carries the guest's script:\n%s", r.HTML)
	}
	if n := strings.Count(r.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;"); n != 6 {
		t.Errorf("HTML has %d escaped names in text and attributes, want 6:\n%s", n, r.HTML)
	}
	if strings.Count(r.Text, script) != 6 || r.Subject != "New booking for "+script {
		t.Errorf("text or subject not as written:\n%s\n%s", r.Subject, r.Text)
	}
	// Every default, every language: the guest's script never reaches the HTML.
	for _, tr := range Triggers() {
		for _, lang := range []string{"en", "it"} {
			tpl, _ := Default(tr, lang)
			r, err := Render(context.Background(), tpl, d)
			if err != nil {
				t.Fatalf("%s/%s: %v", lang, tr, err)
			}
			if strings.Contains(r.HTML, "<script") {
				t.Errorf("%s/%s: HTML carries <script", lang, tr)
			}
		}
	}
}

func TestTextDerivedFromHTML(t *testing.T) {
	d := Sample(trigger.BookingConfirmed, "en")
	tpl := Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "  Hello\r\n {{.Guest.FirstName}}\n",
		HTML: `<html><head><title>T</title><style>p{color:red}</style></head><body>
<h1>Dear   {{.Guest.FirstName}},</h1>
<p>Your stay at <b>{{.Property.Name}}</b>
 is confirmed.<br>See you &amp; soon.</p>
<ul><li>one</li><li>two</li></ul>
<p><a href="{{.Brand.Website}}">our website</a>, <a href="{{.Brand.Website}}">{{.Brand.Website}}</a>,
<a href="mailto:{{.Guest.Email}}">{{.Guest.Email}}</a>, <a href="#top">top</a></p>
<table><tr><td>Total:</td><td>{{money .Booking.GrandTotal .Booking.Currency}}</td></tr></table>
<script>alert(1)</script></body></html>`}
	r, err := Render(context.Background(), tpl, d)
	if err != nil {
		t.Fatal(err)
	}
	want := "Dear Giulia,\n\nYour stay at Casa del Limone is confirmed.\nSee you & soon.\n\n- one\n- two\n\n" +
		"our website (https://www.amalficoastvillas.example), https://www.amalficoastvillas.example, giulia.bianchi@example.com, top\n\n" +
		"Total: €1,452.50\n"
	if r.Text != want {
		t.Errorf("text part:\n%q\nwant\n%q", r.Text, want)
	}
	if r.Subject != "Hello Giulia" {
		t.Errorf("subject %q: want one line", r.Subject)
	}
}

func TestOutputLimit(t *testing.T) {
	d := Sample(trigger.BookingConfirmed, "en")
	d.Guest.FirstName = strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		name, field string
		tpl         Template
	}{
		{"html over 256 KiB", FieldHTML, Template{Subject: "s", HTML: `{{.Guest.FirstName}}{{.Guest.FirstName}}{{.Guest.FirstName}}`}},
		{"text over 256 KiB", FieldText, Template{Subject: "s", HTML: "h", Text: `{{range .Booking.Schedule}}{{$.Guest.FirstName}}{{$.Guest.FirstName}}{{end}}`}},
		{"subject over 256 KiB", FieldSubject, Template{Subject: `{{range .Booking.Schedule}}{{$.Guest.FirstName}}{{$.Guest.FirstName}}{{end}}`, HTML: "h"}},
		{"nested ranges over 256 KiB", FieldHTML, Template{Subject: "s", HTML: `{{range .Booking.Schedule}}{{range $.Booking.Schedule}}{{$.Guest.FirstName}}{{end}}{{end}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.tpl.Trigger, tc.tpl.Language = trigger.BookingConfirmed, "en"
			_, err := Render(context.Background(), tc.tpl, d)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v; want %s too large", err, tc.field)
			}
			if err.Error() != tc.field+": renders more than 256 KiB" {
				t.Errorf("message %q", err)
			}
		})
	}
	// Just under the limit renders.
	d.Guest.FirstName = strings.Repeat("x", MaxOutput)
	if _, err := Render(context.Background(), Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "s", HTML: `{{.Guest.FirstName}}`, Text: "t"}, d); err != nil {
		t.Fatalf("exactly MaxOutput refused: %v", err)
	}
}

// TestDeadline: a render past its context's deadline answers ErrTimeout naming the part;
// the deadline is already over, so the verdict does not depend on the machine's speed.
func TestDeadline(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	// The HTML runs until its writer is stopped: 3 nested ranges of 200 items.
	d := Sample(trigger.BookingConfirmed, "en")
	d.Booking.Payments = make([]Payment, 200)
	tpl := Template{Trigger: trigger.BookingConfirmed, Language: "en", Subject: "s",
		HTML: `{{range .Booking.Payments}}{{range $.Booking.Payments}}{{range $.Booking.Payments}}.{{end}}{{end}}{{end}}`}
	_, err := Render(ctx, tpl, d)
	var fe *FieldError
	if !errors.As(err, &fe) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v; want a timeout", err)
	}
}

func TestBoundedWriterStops(t *testing.T) {
	w := &boundedWriter{max: 10}
	if n, err := w.Write([]byte("0123456789")); n != 10 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("11th byte: %v", err)
	}
	w.stopped.Store(true)
	if _, err := w.Write(nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("stopped writer: %v", err)
	}
}

func TestPreview(t *testing.T) {
	tpl, _ := Default(trigger.BookingCancelled, "it")
	r, err := Preview(context.Background(), tpl, Sample(trigger.BookingCancelled, "it"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Casa del Limone", "435,75\u00a0€", "venerdì 10 luglio 2026", "104233"} {
		if !strings.Contains(r.HTML, want) || !strings.Contains(r.Text, want) {
			t.Errorf("preview lacks %q:\n%s\n%s", want, r.HTML, r.Text)
		}
	}
	if r.Subject != "La sua prenotazione presso Casa del Limone è stata cancellata" {
		t.Errorf("subject %q", r.Subject)
	}
}
