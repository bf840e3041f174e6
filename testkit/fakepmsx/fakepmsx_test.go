package fakepmsx_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/testkit/fakepmsx"
	"github.com/vros/vros/testkit/otaschema"
)

var validator *otaschema.Validator

func TestMain(m *testing.M) {
	v, err := otaschema.Start()
	if err != nil {
		panic(err)
	}
	validator = v
	code := m.Run()
	v.Close()
	os.Exit(code)
}

const avail = `<OTA_HotelAvailNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" EchoToken="e1" TimeStamp="2026-07-06T15:27:41Z" Version="1.0">` +
	`<POS><Source><RequestorID Type="22" ID="VROS"/></Source></POS><AvailStatusMessages HotelCode="H1">` +
	`<AvailStatusMessage BookingLimit="1"><StatusApplicationControl Start="2026-03-01" End="2026-03-03" InvTypeCode="APT"/></AvailStatusMessage>` +
	`</AvailStatusMessages></OTA_HotelAvailNotifRQ>`

const restr = `<OTA_HotelAvailNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" EchoToken="e2" TimeStamp="2026-07-06T15:27:42Z" Version="1.0">` +
	`<POS><Source><RequestorID Type="22" ID="VROS"/></Source></POS><AvailStatusMessages HotelCode="H1">` +
	`<AvailStatusMessage><StatusApplicationControl Start="2026-03-02" End="2026-03-02" InvTypeCode="APT" RatePlanCode="BAR"/>` +
	`<LengthsOfStay><LengthOfStay MinMaxMessageType="SetMinLOS" Time="3" TimeUnit="Day"/><LengthOfStay MinMaxMessageType="RemoveMaxLOS"/></LengthsOfStay>` +
	`<RestrictionStatus Restriction="Master" Status="Close"/></AvailStatusMessage>` +
	`<AvailStatusMessage><StatusApplicationControl Start="2026-03-02" End="2026-03-02" InvTypeCode="APT" RatePlanCode="BAR"/><RestrictionStatus Restriction="Arrival" Status="Close"/></AvailStatusMessage>` +
	`</AvailStatusMessages></OTA_HotelAvailNotifRQ>`

const rates = `<OTA_HotelRateAmountNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" EchoToken="e3" TimeStamp="2026-07-06T15:27:43Z" Version="1.0">` +
	`<POS><Source><RequestorID Type="22" ID="VROS"/></Source></POS><RateAmountMessages HotelCode="H1">` +
	`<RateAmountMessage><StatusApplicationControl InvTypeCode="APT" RatePlanCode="BAR"/><Rates><Rate CurrencyCode="EUR" Start="2026-03-01" End="2026-03-02">` +
	`<BaseByGuestAmts><BaseByGuestAmt AmountAfterTax="120.50" CurrencyCode="EUR"/></BaseByGuestAmts></Rate></Rates></RateAmountMessage>` +
	`</RateAmountMessages></OTA_HotelRateAmountNotifRQ>`

func post(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "text/xml; charset=utf-8", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode == 200 {
		if err := validator.Validate(b.Bytes()); err != nil {
			t.Fatalf("the fake's answer is not schema-valid: %v\n%s", err, b.Bytes())
		}
	}
	return resp.StatusCode, b.Bytes()
}

func TestARIAcceptedIntoState(t *testing.T) {
	s := fakepmsx.New(validator, "user", "secret")
	defer s.Close()
	for _, m := range []string{avail, restr, rates} {
		st, b := post(t, s.URL, fakepmsx.Envelope("user", "secret", []byte(m)))
		if st != 200 || !bytes.Contains(b, []byte("<Success/>")) {
			t.Fatalf("refused: %d %s", st, b)
		}
	}
	if got := s.Availability("H1", "APT", "2026-03-03"); got != "1" {
		t.Fatalf("availability %q", got)
	}
	d := s.Day("H1", "APT", "BAR", "2026-03-02")
	want := fakepmsx.Day{Rate: "120.50", Currency: "EUR", MinLOS: "3", Master: "Close", Arrival: "Close"}
	if d != want {
		t.Fatalf("day %+v, want %+v", d, want)
	}
	if h := s.History("H1", "APT", "BAR", "2026-03-01", "Rate"); len(h) != 1 || h[0].Value != "120.50" || h[0].Seq != 3 {
		t.Fatalf("history %+v", h)
	}
	kinds := []string{}
	for _, c := range s.Accepted("") {
		kinds = append(kinds, c.Kind)
	}
	if strings.Join(kinds, ",") != "availability,restrictions,rates" {
		t.Fatalf("kinds %v", kinds)
	}
	up := s.CallsSince(2)[0].Updates
	want4 := []fakepmsx.Update{
		{Hotel: "H1", Room: "APT", Plan: "BAR", Date: "2026-03-01", Field: "Rate", Value: "120.50"},
		{Hotel: "H1", Room: "APT", Plan: "BAR", Date: "2026-03-01", Field: "Currency", Value: "EUR"},
		{Hotel: "H1", Room: "APT", Plan: "BAR", Date: "2026-03-02", Field: "Rate", Value: "120.50"},
		{Hotel: "H1", Room: "APT", Plan: "BAR", Date: "2026-03-02", Field: "Currency", Value: "EUR"},
	}
	if fmt.Sprint(up) != fmt.Sprint(want4) {
		t.Fatalf("updates %v", up)
	}
}

func TestRefusals(t *testing.T) {
	s := fakepmsx.New(validator, "user", "secret")
	defer s.Close()
	cases := []struct {
		name, body, want string
	}{
		{"bad password", string(fakepmsx.Envelope("user", "wrong", []byte(avail))), `Type="4"`},
		{"no token", string(fakepmsx.Envelope("", "", []byte(avail))), `Type="4"`},
		{"schema: unknown attribute", string(fakepmsx.Envelope("user", "secret", []byte(strings.Replace(avail, `BookingLimit="1"`, `BookingLimit="1" Units="2"`, 1)))), `Type="10"`},
		{"schema: wrong type", string(fakepmsx.Envelope("user", "secret", []byte(strings.Replace(avail, `BookingLimit="1"`, `BookingLimit="yes"`, 1)))), `Type="10"`},
		{"availability and restrictions together", string(fakepmsx.Envelope("user", "secret", []byte(strings.Replace(restr, `<AvailStatusMessage><Stat`, `<AvailStatusMessage BookingLimit="1"><Stat`, 1)))), `Type="3"`},
		{"no RequestorID", string(fakepmsx.Envelope("user", "secret", []byte(strings.Replace(avail, `<POS><Source><RequestorID Type="22" ID="VROS"/></Source></POS>`, ``, 1)))), `Type="3"`},
		{"rate without currency", string(fakepmsx.Envelope("user", "secret", []byte(strings.Replace(rates, `<Rate CurrencyCode="EUR"`, `<Rate`, 1)))), `Type="3"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, b := post(t, s.URL, []byte(c.body))
			if st != 200 || !strings.Contains(string(b), c.want) || strings.Contains(string(b), "<Success/>") {
				t.Fatalf("answered %d %s, want an Errors RS with %s", st, b, c.want)
			}
		})
	}
	if n := len(s.Accepted("")); n != 0 {
		t.Fatalf("%d accepted", n)
	}
	calls := s.Calls()
	if len(calls) != len(cases) || calls[0].Refused == "" {
		t.Fatalf("calls %+v", calls)
	}
	st, _ := post(t, s.URL, []byte("not xml"))
	if st != 415 {
		// the Content-Type is right, the body is not an envelope
		if st != 500 {
			t.Fatalf("status %d", st)
		}
	}
}

func TestFaults(t *testing.T) {
	s := fakepmsx.New(validator, "user", "secret")
	defer s.Close()
	body := fakepmsx.Envelope("user", "secret", []byte(avail))
	s.Fail(1, fakepmsx.Fault500)
	s.Fail(1, fakepmsx.FaultSOAP)
	s.Fail(1, fakepmsx.Fault429)
	for _, want := range []int{500, 500, 429, 200} {
		if st, b := post(t, s.URL, body); st != want {
			t.Fatalf("status %d, want %d: %s", st, want, b)
		}
	}
	if n := len(s.Accepted("")); n != 1 {
		t.Fatalf("%d accepted", n)
	}
	s.Fail(1, fakepmsx.FaultSlow)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "text/xml")
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	// the request is held until the client gives up
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := s.Wait(wctx, func() bool { return s.Held() == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a held answer arrived")
	}
	if err := s.Wait(wctx, func() bool { return len(s.Calls()) == 5 }); err != nil {
		t.Fatal(err)
	}
	if c := s.Calls()[4]; c.Accepted || c.Fault != "slow" {
		t.Fatalf("held call %+v", c)
	}
}

func TestPushValidatesBothWays(t *testing.T) {
	s := fakepmsx.New(validator, "user", "secret")
	defer s.Close()
	var got [][]byte
	pms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		got = append(got, b.Bytes())
		root, list, item := "OTA_HotelResNotifRS", "HotelReservations", "HotelReservation"
		if bytes.Contains(b.Bytes(), []byte("OTA_HotelResModifyNotifRQ")) {
			root, list, item = "OTA_HotelResModifyNotifRS", "HotelResModifies", "HotelResModify"
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Write(fakepmsx.Envelope("", "", []byte(`<`+root+` xmlns="http://www.opentravel.org/OTA/2003/05" Version="1.0"><Success/>`+
			`<`+list+`><`+item+`><UniqueID Type="14" ID="R1"/><ResGlobalInfo><HotelReservationIDs>`+
			`<HotelReservationID ResID_Type="14" ResID_Value="77"/></HotelReservationIDs><BasicPropertyInfo HotelCode="H1"/></ResGlobalInfo></`+item+`></`+list+`></`+root+`>`)))
	}))
	defer pms.Close()
	r := fakepmsx.Reservation{ID: "R1", Status: "new", Channel: "BookingCom", HotelCode: "H1", RoomType: "APT", RatePlan: "BAR",
		Checkin: "2026-03-01", Checkout: "2026-03-04", Adults: 2, Children: 1, Currency: "EUR", Total: "450.00",
		FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: "+39 06 1234", Country: "IT", Notes: "late <arrival>", Card: true,
		Commission: "67.50"}
	for _, r := range []fakepmsx.Reservation{r, {ID: "R1", Status: "modified", HotelCode: "H1", RoomType: "APT", Checkin: "2026-03-02", Checkout: "2026-03-04", Adults: 2},
		{ID: "R1", Status: "modified", Modify: true, HotelCode: "H1", RoomType: "APT", Checkin: "2026-03-02", Checkout: "2026-03-04", Adults: 2},
		{ID: "R1", Status: "cancelled", HotelCode: "H1", RoomType: "APT", Checkin: "2026-03-02", Checkout: "2026-03-04"}} {
		rep, err := s.Push(context.Background(), pms.URL, "vros", "inbound-secret", r)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Success || rep.BookingIDs["R1"] != "77" {
			t.Fatalf("reply %+v", rep)
		}
	}
	if len(got) != 4 || !bytes.Contains(got[0], []byte(fakepmsx.CardNumber)) || !bytes.Contains(got[2], []byte("HotelResModify ")) ||
		!bytes.Contains(got[0], []byte(`<TotalCommissions><CommissionPayableAmount Amount="67.50" CurrencyCode="EUR"/></TotalCommissions>`)) {
		t.Fatalf("pushed %d messages", len(got))
	}
	// an answer that is not schema-valid is an error
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(fakepmsx.Envelope("", "", []byte(`<OTA_HotelResNotifRS xmlns="http://www.opentravel.org/OTA/2003/05" Version="1.0"/>`)))
	}))
	defer bad.Close()
	if _, err := s.Push(context.Background(), bad.URL, "vros", "x", r); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("an invalid answer was taken: %v", err)
	}
}

func TestThrottle(t *testing.T) {
	s := fakepmsx.New(validator, "user", "secret")
	defer s.Close()
	body := fakepmsx.Envelope("user", "secret", []byte(restr)) // two AvailStatusMessages
	s.SetLimits(fakepmsx.Limits{MaxMessages: 1})
	if st, b := post(t, s.URL, body); st != 500 || !bytes.Contains(b, []byte("Throttle limit reached")) {
		t.Fatalf("%d %s", st, b)
	}
	s.SetLimits(fakepmsx.Limits{MaxBytes: 100})
	if st, _ := post(t, s.URL, body); st != 500 {
		t.Fatalf("%d", st)
	}
	// a second request while one is held
	s.SetLimits(fakepmsx.Limits{Concurrent: 1})
	s.Fail(1, fakepmsx.FaultSlow)
	done := make(chan int, 1)
	go func() {
		resp, err := http.Post(s.URL, "text/xml", bytes.NewReader(body))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Wait(ctx, func() bool { return s.Held() == 1 }); err != nil {
		t.Fatal(err)
	}
	if st, b := post(t, s.URL, body); st != 500 || !bytes.Contains(b, []byte("Throttle")) {
		t.Fatalf("%d %s", st, b)
	}
	s.Release()
	if st := <-done; st != 200 {
		t.Fatalf("the held request answered %d", st)
	}
	if s.MaxInFlight() != 2 {
		t.Fatalf("max in flight %d", s.MaxInFlight())
	}
	calls := s.Calls()
	if len(calls) != 4 || !strings.HasPrefix(calls[0].Refused, "throttle") || !calls[3].Accepted {
		t.Fatalf("calls %+v", calls)
	}
}
