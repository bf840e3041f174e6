// Package opentravel is the channel.Adapter of OpenTravel 2015A XML as SiteMinder's
// pmsXchange documents it for a PMS (docs/channels.md, "OpenTravel (pmsXchange)"): ARI out as
// OTA_HotelAvailNotifRQ (availability; restrictions) and OTA_HotelRateAmountNotifRQ (rates)
// in SOAP 1.1 envelopes with a WS-Security UsernameToken, and reservations in as pushed
// OTA_HotelResNotifRQ / OTA_HotelResModifyNotifRQ, answered with their RS once applied.
package opentravel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// maxAnswer bounds the answer read.
const maxAnswer = 4 << 20

// Adapter speaks pmsXchange. Safe for concurrent use.
type Adapter struct {
	// HTTP makes the requests (integration-svc's egress-guarded client, with its timeout);
	// Client, when set, picks the client of a connection's account instead.
	HTTP   *http.Client
	Client func(ctx context.Context, c channel.Connection) (*http.Client, error)
	// Limits are pmsXchange's throttle, kept per connection (New: DefaultLimits).
	Limits Limits
	// Now is the clock of the messages' TimeStamp (nil: time.Now).
	Now func() time.Time

	limiter limiter
}

// New is an adapter making its requests with client, within DefaultLimits.
func New(client *http.Client) *Adapter { return &Adapter{HTTP: client, Limits: DefaultLimits} }

var (
	_ channel.Adapter  = (*Adapter)(nil)
	_ channel.Receiver = (*Adapter)(nil)
)

// Name is channel.OpenTravel.
func (a *Adapter) Name() string { return channel.OpenTravel }

func (a *Adapter) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func echoToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (a *Adapter) attrs() payloadAttrs {
	return payloadAttrs{EchoToken: echoToken(), TimeStamp: stamp(a.now()), Version: version}
}

// request is one message ready to send and the dates it covers.
type request struct {
	kind     string
	body     []byte
	from, to string
}

// PushARI sends b: the availability ranges first (OTA_HotelAvailNotifRQ with BookingLimit),
// then per chunk of rate ranges their restrictions (OTA_HotelAvailNotifRQ: pmsXchange wants
// availability and restrictions in separate requests) and their rates
// (OTA_HotelRateAmountNotifRQ), reported sent once both are accepted. A chunk is at most
// Limits.MaxMessages messages and Limits.MaxBytes bytes.
func (a *Adapter) PushARI(ctx context.Context, b channel.Batch, wait func(ctx context.Context, kind string) error,
	sent func(avail []channel.Availability, rates []channel.Rate) error, record func(channel.Exchange)) error {
	c := b.Connection
	for rest := b.Availability; len(rest) > 0; {
		n, req, err := fit(min(len(rest), a.Limits.maxMessages()), a.Limits.maxBytes(), func(n int) (request, error) {
			return a.availability(b, rest[:n])
		})
		if err != nil {
			return err
		}
		if err := a.send(ctx, c, req, wait, record); err != nil {
			return err
		}
		if err := sent(rest[:n], nil); err != nil {
			return err
		}
		rest = rest[n:]
	}
	// each rate range is three AvailStatusMessages (master with lengths of stay, arrival,
	// departure) and one RateAmountMessage
	for rest := b.Rates; len(rest) > 0; {
		// the restrictions and the rates of the same ranges must both fit
		n, _, err := fit(min(len(rest), max(a.Limits.maxMessages()/3, 1)), a.Limits.maxBytes(), func(n int) (request, error) {
			restr, err := a.restrictions(b, rest[:n])
			if err != nil {
				return restr, err
			}
			rates, err := a.rates(b, rest[:n])
			if len(rates.body) > len(restr.body) {
				return rates, err
			}
			return restr, err
		})
		if err != nil {
			return err
		}
		restr, err := a.restrictions(b, rest[:n])
		if err != nil {
			return err
		}
		rates, err := a.rates(b, rest[:n])
		if err != nil {
			return err
		}
		if err := a.send(ctx, c, restr, wait, record); err != nil {
			return err
		}
		if rates.body != nil {
			if err := a.send(ctx, c, rates, wait, record); err != nil {
				return err
			}
		}
		if err := sent(nil, rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// fit finds the most ranges, from n down, whose request build(n) is within maxBytes.
func fit(n, maxBytes int, build func(n int) (request, error)) (int, request, error) {
	for {
		req, err := build(n)
		if err != nil {
			return 0, req, err
		}
		if len(req.body) <= maxBytes || n == 1 {
			return n, req, nil
		}
		n = max(n/2, 1)
	}
}

func (a *Adapter) availability(b channel.Batch, ranges []channel.Availability) (request, error) {
	m := b.Mapping
	rq := availNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(b.Connection.Username)}
	rq.Messages = &availStatusMessages{HotelCode: m.RemotePropertyID}
	req := request{kind: channel.KindAvailability, from: ranges[0].From, to: ranges[0].To}
	for _, av := range ranges {
		n := av.Available
		rq.Messages.Message = append(rq.Messages.Message, availStatusMessage{
			BookingLimit: &n,
			SAC:          statusApplicationControl{Start: av.From, End: av.To, InvTypeCode: m.RoomTypeID},
		})
		req.from, req.to = minDate(req.from, av.From), maxDate(req.to, av.To)
	}
	var err error
	req.body, err = envelope(b.Connection.Username, b.Connection.Password, rq)
	return req, err
}

func (a *Adapter) restrictions(b channel.Batch, ranges []channel.Rate) (request, error) {
	m := b.Mapping
	rq := availNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(b.Connection.Username)}
	rq.Messages = &availStatusMessages{HotelCode: m.RemotePropertyID}
	req := request{kind: channel.KindRestrictions, from: ranges[0].From, to: ranges[0].To}
	for _, r := range ranges {
		rq.Messages.Message = append(rq.Messages.Message, restrictions(m.RoomTypeID, r)...)
		req.from, req.to = minDate(req.from, r.From), maxDate(req.to, r.To)
	}
	var err error
	req.body, err = envelope(b.Connection.Username, b.Connection.Password, rq)
	return req, err
}

// rates is the OTA_HotelRateAmountNotifRQ of the ranges with a price (body nil: none has).
func (a *Adapter) rates(b channel.Batch, ranges []channel.Rate) (request, error) {
	m := b.Mapping
	rq := rateAmountNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(b.Connection.Username)}
	rq.Messages.HotelCode = m.RemotePropertyID
	req := request{kind: channel.KindRates, from: ranges[0].From, to: ranges[0].To}
	for _, r := range ranges {
		if r.Rate != "" {
			ro := rateOut{CurrencyCode: b.Currency, Start: r.From, End: r.To}
			ro.Amount.AmountAfterTax, ro.Amount.CurrencyCode = r.Rate, b.Currency
			rq.Messages.Message = append(rq.Messages.Message, rateAmountMessage{
				// the dates on the Rate as pmsXchange's example has them, and on the
				// StatusApplicationControl as OpenTravel's other users read them
				SAC:   statusApplicationControl{Start: r.From, End: r.To, InvTypeCode: m.RoomTypeID, RatePlanCode: r.RemoteRatePlanID},
				Rates: []rateOut{ro},
			})
		}
		req.from, req.to = minDate(req.from, r.From), maxDate(req.to, r.To)
	}
	if len(rq.Messages.Message) == 0 {
		return req, nil
	}
	var err error
	req.body, err = envelope(b.Connection.Username, b.Connection.Password, rq)
	return req, err
}

// restrictions are the AvailStatusMessages of one rate range: the master status (stop-sell)
// with the lengths of stay, then arrival (CTA) and departure (CTD).
func restrictions(room string, r channel.Rate) []availStatusMessage {
	sac := statusApplicationControl{Start: r.From, End: r.To, InvTypeCode: room, RatePlanCode: r.RemoteRatePlanID}
	los := func(set, remove string, n int) lengthOfStay {
		if n <= 0 {
			return lengthOfStay{MinMaxMessageType: remove}
		}
		return lengthOfStay{MinMaxMessageType: set, Time: strconv.Itoa(n), TimeUnit: "Day"}
	}
	status := func(closed bool) string {
		if closed {
			return "Close"
		}
		return "Open"
	}
	return []availStatusMessage{
		{
			SAC: sac,
			LOS: []lengthOfStay{
				los("SetMinLOS", "RemoveMinLOS", r.MinStayArrival),
				los("SetForwardMinStay", "RemoveForwardMinStay", r.MinStayThrough),
				los("SetMaxLOS", "RemoveMaxLOS", r.MaxStay),
			},
			Restriction: &restrictionStatus{Restriction: "Master", Status: status(r.StopSell)},
		},
		{SAC: sac, Restriction: &restrictionStatus{Restriction: "Arrival", Status: status(r.ClosedToArrival)}},
		{SAC: sac, Restriction: &restrictionStatus{Restriction: "Departure", Status: status(r.ClosedToDeparture)}},
	}
}

func minDate(a, b string) string {
	if b < a {
		return b
	}
	return a
}

func maxDate(a, b string) string {
	if b > a {
		return b
	}
	return a
}

// send makes one request within the connection's limits, then wait (the caller's: right
// before the request), recording it.
func (a *Adapter) send(ctx context.Context, c channel.Connection, req request,
	wait func(ctx context.Context, kind string) error, record func(channel.Exchange)) error {
	release, err := a.limiter.acquire(ctx, c.Endpoint+"\x00"+c.Username, a.Limits)
	if err != nil {
		return err
	}
	if wait != nil {
		if err := wait(ctx, req.kind); err != nil {
			release(false)
			return err
		}
	}
	x, err := a.do(ctx, c, req.kind, req.body)
	release(true)
	x.From, x.To = req.from, req.to
	record(x)
	return err
}

// do posts body to the connection's endpoint and reads the answer: nil when the RS says
// Success, else a *channel.RemoteError (Retryable for a SOAP Fault, 429, 5xx, a timeout or
// a broken connection).
func (a *Adapter) do(ctx context.Context, c channel.Connection, kind string, body []byte) (channel.Exchange, error) {
	x := channel.Exchange{Kind: kind, Request: Mask(body)}
	fail := func(e *channel.RemoteError) (channel.Exchange, error) {
		x.Err = e
		return x, e
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return fail(&channel.RemoteError{Message: "the endpoint: " + err.Error()})
	}
	req.Header.Set("Content-Type", contentType)
	client := a.HTTP
	if a.Client != nil {
		if client, err = a.Client(ctx, c); err != nil {
			return fail(&channel.RemoteError{Retryable: true, Message: "the account's HTTP client: " + err.Error()})
		}
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		x.Duration = time.Since(start)
		return fail(&channel.RemoteError{Retryable: true, Message: err.Error()})
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	x.Duration = time.Since(start)
	x.HTTPStatus, x.Response = resp.StatusCode, Mask(answer)
	if err != nil {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Retryable: true, Message: "reading the answer: " + err.Error()})
	}
	retryAfter := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	var fault soapFault
	var rs rsIn
	name, berr := decodeBody(answer, func(n xml.Name) any {
		if n.Space == nsSOAP && n.Local == "Fault" {
			return &fault
		}
		return &rs
	})
	if berr == nil && name.Space == nsSOAP && name.Local == "Fault" {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Retryable: true, RetryAfter: retryAfter,
			Message: strings.TrimSpace("SOAP Fault " + fault.Code + ": " + fault.String)})
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Retryable: true, RetryAfter: retryAfter, Message: snippet(answer)})
	}
	if berr != nil || name.Space != nsOTA || !strings.HasSuffix(name.Local, "RS") {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Message: "the answer is not an OTA RS in a SOAP envelope: " + snippet(answer)})
	}
	if len(rs.Errors) > 0 {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Message: errorsText(rs.Errors)})
	}
	if resp.StatusCode/100 != 2 || rs.Success == nil {
		return fail(&channel.RemoteError{Status: resp.StatusCode, Message: "the answer has no Success: " + snippet(answer)})
	}
	if len(rs.Warnings) > 0 {
		x.Warning = errorsText(rs.Warnings)
	}
	return x, nil
}

func errorsText(errs []otaError) string {
	var parts []string
	for _, e := range errs {
		t := strings.TrimSpace(e.Text)
		if t == "" {
			t = e.ShortText
		}
		head := "Error"
		if e.Type != "" {
			head += " type " + e.Type
		}
		if e.Code != "" {
			head += " code " + e.Code
		}
		parts = append(parts, head+": "+t)
	}
	return strings.Join(parts, "; ")
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// PullRevisions answers none: pmsXchange's reservations reach vros pushed, on the inbound
// route (Receive).
func (a *Adapter) PullRevisions(context.Context, channel.Connection, func(channel.Exchange)) ([]channel.Revision, error) {
	return nil, nil
}

// Ack does nothing: a pushed reservation is confirmed by the answer to its message (Reply).
func (a *Adapter) Ack(context.Context, channel.Connection, channel.Revision, func(channel.Exchange)) error {
	return nil
}

// Test sends an OTA_HotelAvailNotifRQ without AvailStatusMessages (it changes nothing):
// an authenticated request within the schemas vros has (OTA_PingRQ is not among them).
// Answered Success, or Errors other than authentication (Type 4) or authorization (Type 6),
// the credentials are taken; anything else is the error.
func (a *Adapter) Test(ctx context.Context, c channel.Connection, record func(channel.Exchange)) error {
	rq := availNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(c.Username)}
	body, err := envelope(c.Username, c.Password, rq)
	if err != nil {
		return err
	}
	release, err := a.limiter.acquire(ctx, c.Endpoint+"\x00"+c.Username, a.Limits)
	if err != nil {
		return err
	}
	x, err := a.do(ctx, c, channel.KindTest, body)
	release(true)
	var re *channel.RemoteError
	if errors.As(err, &re) && !re.Retryable && re.Status/100 == 2 && bytes.Contains(x.Response, []byte("<Errors")) &&
		!authError(x.Response) {
		err, x.Err = nil, nil
	}
	record(x)
	if err != nil {
		return fmt.Errorf("opentravel: %w", err)
	}
	return nil
}

func authError(answer []byte) bool {
	var rs rsIn
	if _, err := decodeBody(answer, func(xml.Name) any { return &rs }); err != nil {
		return true
	}
	for _, e := range rs.Errors {
		if e.Type == "4" || e.Type == "6" {
			return true
		}
	}
	return false
}
