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

// DefaultMaxMessages bounds the AvailStatusMessage or RateAmountMessage elements of one
// request (pmsXchange publishes no limit; this keeps a request near 100 KB).
const DefaultMaxMessages = 300

// maxAnswer bounds the answer read.
const maxAnswer = 4 << 20

// Adapter speaks pmsXchange. Safe for concurrent use.
type Adapter struct {
	// HTTP makes the requests (integration-svc's egress-guarded client, with its timeout).
	HTTP *http.Client
	// MaxMessages bounds the messages of one request (0: DefaultMaxMessages); a batch with
	// more ranges is split across requests.
	MaxMessages int
	// Now is the clock of the messages' TimeStamp (nil: time.Now).
	Now func() time.Time
}

// New is an adapter making its requests with client.
func New(client *http.Client) *Adapter { return &Adapter{HTTP: client} }

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

func (a *Adapter) max() int {
	if a.MaxMessages > 0 {
		return a.MaxMessages
	}
	return DefaultMaxMessages
}

func echoToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (a *Adapter) attrs() payloadAttrs {
	return payloadAttrs{EchoToken: echoToken(), TimeStamp: stamp(a.now()), Version: version}
}

// PushARI sends b: the availability ranges first (OTA_HotelAvailNotifRQ with BookingLimit),
// then per chunk of rate ranges their restrictions (OTA_HotelAvailNotifRQ: pmsXchange wants
// availability and restrictions in separate requests) and their rates
// (OTA_HotelRateAmountNotifRQ), sent reporting a chunk once both are accepted.
func (a *Adapter) PushARI(ctx context.Context, b channel.Batch, wait func(ctx context.Context, kind string) error,
	sent func(avail []channel.Availability, rates []channel.Rate) error, record func(channel.Exchange)) error {
	c, m := b.Connection, b.Mapping
	limit := a.max()
	for start := 0; start < len(b.Availability); start += limit {
		chunk := b.Availability[start:min(start+limit, len(b.Availability))]
		rq := availNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(c.Username)}
		rq.Messages = &struct {
			HotelCode string               `xml:"HotelCode,attr"`
			Message   []availStatusMessage `xml:"AvailStatusMessage"`
		}{HotelCode: m.RemotePropertyID}
		from, to := chunk[0].From, chunk[0].To
		for _, av := range chunk {
			n := av.Available
			rq.Messages.Message = append(rq.Messages.Message, availStatusMessage{
				BookingLimit: &n,
				SAC:          statusApplicationControl{Start: av.From, End: av.To, InvTypeCode: m.RoomTypeID},
			})
			from, to = minDate(from, av.From), maxDate(to, av.To)
		}
		if err := a.send(ctx, c, channel.KindAvailability, rq, from, to, wait, record); err != nil {
			return err
		}
		if err := sent(chunk, nil); err != nil {
			return err
		}
	}
	// each rate range is three AvailStatusMessages (master with lengths of stay, arrival,
	// departure) and one RateAmountMessage
	per := max(limit/3, 1)
	for start := 0; start < len(b.Rates); start += per {
		chunk := b.Rates[start:min(start+per, len(b.Rates))]
		restr := availNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(c.Username)}
		restr.Messages = &struct {
			HotelCode string               `xml:"HotelCode,attr"`
			Message   []availStatusMessage `xml:"AvailStatusMessage"`
		}{HotelCode: m.RemotePropertyID}
		rates := rateAmountNotifRQ{payloadAttrs: a.attrs(), POS: newPOS(c.Username)}
		rates.Messages.HotelCode = m.RemotePropertyID
		from, to := chunk[0].From, chunk[0].To
		for _, r := range chunk {
			restr.Messages.Message = append(restr.Messages.Message, restrictions(m.RoomTypeID, r)...)
			if r.Rate != "" {
				ro := rateOut{CurrencyCode: b.Currency, Start: r.From, End: r.To}
				ro.Amount.AmountAfterTax, ro.Amount.CurrencyCode = r.Rate, b.Currency
				rates.Messages.Message = append(rates.Messages.Message, rateAmountMessage{
					SAC:   statusApplicationControl{InvTypeCode: m.RoomTypeID, RatePlanCode: r.RemoteRatePlanID},
					Rates: []rateOut{ro},
				})
			}
			from, to = minDate(from, r.From), maxDate(to, r.To)
		}
		if err := a.send(ctx, c, channel.KindRestrictions, restr, from, to, wait, record); err != nil {
			return err
		}
		if len(rates.Messages.Message) > 0 {
			if err := a.send(ctx, c, channel.KindRates, rates, from, to, wait, record); err != nil {
				return err
			}
		}
		if err := sent(nil, chunk); err != nil {
			return err
		}
	}
	return nil
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

// send makes one request after wait, recording it.
func (a *Adapter) send(ctx context.Context, c channel.Connection, kind string, payload any, from, to string,
	wait func(ctx context.Context, kind string) error, record func(channel.Exchange)) error {
	if wait != nil {
		if err := wait(ctx, kind); err != nil {
			return err
		}
	}
	x, err := a.do(ctx, c, kind, payload)
	x.From, x.To = from, to
	record(x)
	return err
}

// do posts payload to the connection's endpoint and reads the answer: nil when the RS says
// Success, else a *channel.RemoteError (Retryable for a SOAP Fault, 429, 5xx, a timeout or
// a broken connection).
func (a *Adapter) do(ctx context.Context, c channel.Connection, kind string, payload any) (channel.Exchange, error) {
	x := channel.Exchange{Kind: kind}
	body, err := envelope(c.Username, c.Password, payload)
	if err != nil {
		x.Err = err
		return x, err
	}
	x.Request = Mask(body)
	fail := func(e *channel.RemoteError) (channel.Exchange, error) {
		x.Err = e
		return x, e
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return fail(&channel.RemoteError{Message: "the endpoint: " + err.Error()})
	}
	req.Header.Set("Content-Type", contentType)
	start := time.Now()
	resp, err := a.HTTP.Do(req)
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
	x, err := a.do(ctx, c, channel.KindTest, rq)
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
