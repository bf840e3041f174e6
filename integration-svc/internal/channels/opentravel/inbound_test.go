package opentravel_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/opentravel"
	"github.com/vros/vros/testkit/fakepmsx"
)

// inbound is vros's inbound route in small: Receive, apply (a booking id per reservation;
// the reservations named in conflict become conflicts), Reply.
type inbound struct {
	adapter  *opentravel.Adapter
	conn     channel.Connection
	srv      *httptest.Server
	mu       sync.Mutex
	received []channel.Revision
	errs     []error
	conflict map[string]bool
	failNext error
}

func newInbound(t *testing.T) *inbound {
	in := &inbound{adapter: opentravel.New(http.DefaultClient), conflict: map[string]bool{},
		conn: channel.Connection{ID: 7, Adapter: channel.OpenTravel, Credentials: channel.Credentials{Username: user, Password: pass}}}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		msg, err := in.adapter.Receive(r.Context(), in.conn, b)
		var applied []channel.Applied
		in.mu.Lock()
		in.errs = append(in.errs, err)
		if err == nil {
			err, in.failNext = in.failNext, nil
		}
		if err == nil {
			for _, rev := range msg.Revisions {
				in.received = append(in.received, rev)
				a := channel.Applied{RevisionID: rev.RevisionID, BookingID: 900 + int64(len(in.received))}
				if in.conflict[rev.ReservationID] {
					a.BookingID = 0
					a.Conflict = &channel.Conflict{Reason: channel.ReasonNightsTaken, Nights: []string{rev.Checkin}}
				}
				applied = append(applied, a)
			}
		}
		in.mu.Unlock()
		ct, body, status := in.adapter.Reply(msg, applied, err)
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(in.srv.Close)
	return in
}

func (in *inbound) last() (channel.Revision, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var rev channel.Revision
	if len(in.received) > 0 {
		rev = in.received[len(in.received)-1]
	}
	return rev, in.errs[len(in.errs)-1]
}

var booking = fakepmsx.Reservation{ID: "SM-1001", Status: "new", Channel: "BookingCom", HotelCode: "HOTEL1", RoomType: "VILLA", RatePlan: "BAR",
	Checkin: "2027-01-10", Checkout: "2027-01-13", Adults: 2, Children: 1, Currency: "EUR", Total: "450.00",
	FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: "+39 06 1234", Country: "it", Notes: "late arrival", Card: true,
	Commission: "67.50"}

func TestReceiveNewModifiedCancelled(t *testing.T) {
	fake := fakepmsx.New(validator, user, pass)
	defer fake.Close()
	in := newInbound(t)
	ctx := context.Background()
	t0 := time.Date(2027, 1, 1, 10, 0, 0, 0, time.UTC)

	nb := booking
	nb.Modified = t0
	rep, err := fake.Push(ctx, in.srv.URL, user, pass, nb) // the reply is validated by the fake
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Success || rep.BookingIDs["SM-1001"] != "901" || rep.Root != "OTA_HotelResNotifRS" || rep.HTTPStatus != 200 || !strings.HasPrefix(rep.EchoToken, "push-") {
		t.Fatalf("reply %+v\n%s", rep, rep.Body)
	}
	rev, err := in.last()
	if err != nil {
		t.Fatal(err)
	}
	want := channel.Revision{ConnectionID: 7, RevisionID: rev.RevisionID, ReservationID: "SM-1001", Channel: "BookingCom", Status: channel.RevisionNew,
		Order: t0.UnixNano(), RemotePropertyID: "HOTEL1", RoomTypeID: "VILLA", RemoteRatePlanID: "BAR", Checkin: "2027-01-10", Checkout: "2027-01-13",
		Adults: 2, Children: 1, Currency: "EUR", Total: "450.00", Commission: "67.50",
		Guest: channel.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: "+39 06 1234", Country: "IT"}, Notes: "late arrival", Raw: rev.Raw}
	if !equalRev(rev, want) {
		t.Fatalf("revision\n%+v\nwant\n%+v", rev, want)
	}
	if !strings.HasPrefix(rev.RevisionID, "ota-") {
		t.Fatalf("revision id %q", rev.RevisionID)
	}
	if bytes.Contains(rev.Raw, []byte(fakepmsx.CardNumber)) || bytes.Contains(rev.Raw, []byte(">"+fakepmsx.CardCVC+"<")) || !bytes.Contains(rev.Raw, []byte("UniqueID")) {
		t.Fatalf("raw keeps card data or lost the reservation: %s", rev.Raw)
	}

	// the same push again: the same revision id (a duplicate for the inbound side)
	if _, err := fake.Push(ctx, in.srv.URL, user, pass, nb); err != nil {
		t.Fatal(err)
	}
	again, _ := in.last()
	if again.RevisionID != rev.RevisionID {
		t.Fatalf("a repeated push has another revision id: %s vs %s", again.RevisionID, rev.RevisionID)
	}

	// modified, through OTA_HotelResNotifRQ and through OTA_HotelResModifyNotifRQ
	for i, modify := range []bool{false, true} {
		m := booking
		m.Status, m.Modify, m.Checkin, m.Modified, m.Card = "modified", modify, "2027-01-11", t0.Add(time.Duration(i+1)*time.Hour), false
		rep, err := fake.Push(ctx, in.srv.URL, user, pass, m)
		if err != nil {
			t.Fatal(err)
		}
		wantRoot := map[bool]string{false: "OTA_HotelResNotifRS", true: "OTA_HotelResModifyNotifRS"}[modify]
		if !rep.Success || rep.Root != wantRoot || rep.BookingIDs["SM-1001"] == "" {
			t.Fatalf("modify reply %+v\n%s", rep, rep.Body)
		}
		mr, err := in.last()
		if err != nil || mr.Status != channel.RevisionModified || mr.Checkin != "2027-01-11" || mr.Order <= rev.Order || mr.RevisionID == rev.RevisionID {
			t.Fatalf("modified revision %+v %v", mr, err)
		}
	}

	c := booking
	c.Status, c.Modified, c.Card = "cancelled", t0.Add(5*time.Hour), false
	if rep, err := fake.Push(ctx, in.srv.URL, user, pass, c); err != nil || !rep.Success {
		t.Fatalf("cancel reply %+v %v", rep, err)
	}
	cr, err := in.last()
	if err != nil || cr.Status != channel.RevisionCancelled || cr.ReservationID != "SM-1001" {
		t.Fatalf("cancelled revision %+v %v", cr, err)
	}
}

func equalRev(a, b channel.Revision) bool {
	a.Raw, b.Raw = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestReceiveSeveralAndConflicts(t *testing.T) {
	fake := fakepmsx.New(validator, user, pass)
	defer fake.Close()
	in := newInbound(t)
	ctx := context.Background()
	a, b := booking, booking
	a.ID, b.ID = "SM-A", "SM-B"
	in.conflict["SM-B"] = true
	rep, err := fake.Push(ctx, in.srv.URL, user, pass, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Success || rep.BookingIDs["SM-A"] == "" || rep.BookingIDs["SM-B"] != "" || len(rep.Warnings) != 1 || rep.Warnings[0].RecordID != "SM-B" {
		t.Fatalf("mixed reply %+v\n%s", rep, rep.Body)
	}
	rep, err = fake.Push(ctx, in.srv.URL, user, pass, b)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Success || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Text, "nights_taken") || rep.Errors[0].Type != "3" {
		t.Fatalf("conflict reply %+v\n%s", rep, rep.Body)
	}
	// not processed now: an error answer asking for the message again
	in.failNext = errors.New("booking-svc unavailable")
	rep, err = fake.Push(ctx, in.srv.URL, user, pass, a)
	if err != nil {
		t.Fatal(err)
	}
	if rep.HTTPStatus != 500 || rep.Success || len(rep.Errors) != 1 || rep.Errors[0].Type != "12" {
		t.Fatalf("retry reply %+v\n%s", rep, rep.Body)
	}
}

func TestReceiveRefusesCredentials(t *testing.T) {
	fake := fakepmsx.New(validator, user, pass)
	defer fake.Close()
	in := newInbound(t)
	for _, c := range []struct{ user, pass string }{{user, "wrong"}, {"other", pass}, {"", ""}} {
		rep, err := fake.Push(context.Background(), in.srv.URL, c.user, c.pass, booking)
		if err != nil {
			t.Fatal(err)
		}
		if _, rerr := in.last(); !errors.Is(rerr, channel.ErrUnauthorized) {
			t.Fatalf("%+v: %v", c, rerr)
		}
		if rep.HTTPStatus != 401 || rep.Success || len(rep.Errors) != 1 || rep.Errors[0].Type != "4" {
			t.Fatalf("reply %+v", rep)
		}
	}
	// a connection without credentials takes nobody
	in.conn.Password = ""
	if _, err := in.adapter.Receive(context.Background(), in.conn, fakepmsx.Envelope(user, "", fakepmsx.XML("e", time.Now(), booking))); !errors.Is(err, channel.ErrUnauthorized) {
		t.Fatalf("empty password: %v", err)
	}
}

func TestReceiveMalformed(t *testing.T) {
	a := opentravel.New(http.DefaultClient)
	conn := channel.Connection{ID: 7, Credentials: channel.Credentials{Username: user, Password: pass}}
	good := string(fakepmsx.XML("e1", time.Now(), booking))
	env := func(s string) []byte { return fakepmsx.Envelope(user, pass, []byte(s)) }
	cases := []struct {
		name  string
		body  []byte
		field string
	}{
		{"not XML", []byte("{}"), "Envelope"},
		{"not an envelope", []byte(good), "Envelope"},
		{"empty body", env(""), "Body"},
		{"two messages", env(good + good), "Body"},
		{"another message", env(`<OTA_HotelAvailNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" Version="1.0"/>`), "Body"},
		{"wrong namespace", env(strings.Replace(good, "http://www.opentravel.org/OTA/2003/05", "urn:other", 1)), "Body"},
		{"unclosed", env(strings.Replace(good, "</HotelReservations>", "", 1)), "Envelope"},
		{"no TimeStamp", env(strings.Replace(good, `TimeStamp="`, `Stamp="`, 1)), "OTA_HotelResNotifRQ@TimeStamp"},
		{"no Version", env(strings.Replace(good, ` Version="1.0"`, ``, 1)), "OTA_HotelResNotifRQ@Version"},
		{"no reservation", env(`<OTA_HotelResNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" TimeStamp="2027-01-01T00:00:00Z" Version="1.0"><HotelReservations/></OTA_HotelResNotifRQ>`), "OTA_HotelResNotifRQ"},
		{"no UniqueID", env(strings.Replace(good, `<UniqueID Type="14" ID="SM-1001"/>`, ``, 1)), "HotelReservation[1]/UniqueID"},
		{"unknown status", env(strings.Replace(good, `ResStatus="Commit"`, `ResStatus="Quote"`, 1)), "HotelReservation[1]@ResStatus"},
		{"bad date", env(strings.Replace(good, `Start="2027-01-10"`, `Start="10/01/2027"`, 1)), "HotelReservation[1]/RoomStay/TimeSpan@Start"},
		{"no dates", env(strings.Replace(good, `<TimeSpan Start="2027-01-10" End="2027-01-13"/>`, ``, 1)), "HotelReservation[1]/RoomStay/TimeSpan"},
		{"no room type", env(strings.Replace(good, `<RoomTypes><RoomType RoomTypeCode="VILLA"/></RoomTypes>`, ``, 1)), "HotelReservation[1]/RoomStay/RoomTypes/RoomType@RoomTypeCode"},
		{"bad total", env(strings.Replace(good, `AmountAfterTax="450.00"`, `AmountAfterTax="lots"`, 1)), "HotelReservation[1]/RoomStay/Total@AmountAfterTax"},
		{"bad commission", env(strings.Replace(good, `Amount="67.50"`, `Amount="-1"`, 1)), "HotelReservation[1]/ResGlobalInfo/TotalCommissions/CommissionPayableAmount@Amount"},
		{"commission above the total", env(strings.Replace(good, `Amount="67.50"`, `Amount="450.01"`, 1)), "HotelReservation[1]/ResGlobalInfo/TotalCommissions/CommissionPayableAmount@Amount"},
		{"commission in another currency", env(strings.Replace(good, `<CommissionPayableAmount Amount="67.50" CurrencyCode="EUR"/>`,
			`<CommissionPayableAmount Amount="67.50" CurrencyCode="USD"/>`, 1)), "HotelReservation[1]/ResGlobalInfo/TotalCommissions/CommissionPayableAmount@CurrencyCode"},
		{"bad guest count", env(strings.Replace(good, `Count="2"`, `Count="two"`, 1)), "HotelReservation[1]/RoomStay/GuestCounts/GuestCount@Count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, err := a.Receive(context.Background(), conn, c.body)
			var ie *channel.InboundError
			if !errors.As(err, &ie) || ie.Field != c.field {
				t.Fatalf("want an InboundError on %s, got %v", c.field, err)
			}
			ct, body, status := a.Reply(msg, nil, err)
			if status != 400 || !strings.HasPrefix(ct, "text/xml") {
				t.Fatalf("reply %d %s", status, ct)
			}
			if verr := validator.Validate(body); verr != nil {
				t.Fatalf("the reply is not schema-valid: %v\n%s", verr, body)
			}
		})
	}
}

func TestMask(t *testing.T) {
	msg := fakepmsx.Envelope(user, pass, fakepmsx.XML("e", time.Now(), booking))
	m := opentravel.Mask(msg)
	for _, secret := range []string{pass, fakepmsx.CardNumber, ">" + fakepmsx.CardCVC + "<"} {
		if bytes.Contains(m, []byte(secret)) {
			t.Fatalf("masked copy keeps %q", secret)
		}
	}
	if !bytes.Contains(m, []byte("Ada")) || !bytes.Contains(m, []byte(user)) {
		t.Fatal("masked too much")
	}
}

func TestReceivePrefixes(t *testing.T) {
	// the OTA namespace bound to a prefix on the envelope, WS-Security under another prefix
	payload := string(fakepmsx.XML("e9", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), booking))
	payload = strings.Replace(payload, ` xmlns="http://www.opentravel.org/OTA/2003/05"`, ``, 1)
	payload = regexp.MustCompile(`<(/?)([A-Za-z])`).ReplaceAllString(payload, `<${1}ota:${2}`)
	body := `<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ota="http://www.opentravel.org/OTA/2003/05">` +
		`<s:Header><sec:Security xmlns:sec="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">` +
		`<sec:UsernameToken><sec:Username>` + user + `</sec:Username><sec:Password>` + pass + `</sec:Password></sec:UsernameToken></sec:Security></s:Header>` +
		`<s:Body>` + payload + `</s:Body></s:Envelope>`
	if err := validator.Validate([]byte(body)); err != nil {
		t.Fatalf("the test's message is not schema-valid: %v", err)
	}
	a := opentravel.New(http.DefaultClient)
	conn := channel.Connection{ID: 7, Credentials: channel.Credentials{Username: user, Password: pass}}
	in, err := a.Receive(context.Background(), conn, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Revisions) != 1 || in.Revisions[0].ReservationID != "SM-1001" || in.Revisions[0].Checkout != "2027-01-13" || in.Revisions[0].Guest.LastName != "Lovelace" {
		t.Fatalf("revisions %+v", in.Revisions)
	}
	_, reply, status := a.Reply(in, []channel.Applied{{RevisionID: in.Revisions[0].RevisionID, BookingID: 5}}, nil)
	if err := validator.Validate(reply); err != nil || status != 200 || !bytes.Contains(reply, []byte(`EchoToken="e9"`)) {
		t.Fatalf("reply %d %v\n%s", status, err, reply)
	}
}
