package inbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inboundapi"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
)

// pusher is an adapter whose messages carry their revisions (OpenTravel's family), or a
// hint to pull (Channex's webhook) when the body says "pull": JSON revisions, "user"
// credentials.
type pusher struct {
	feed
	replied [][]channel.Applied
}

func (p *pusher) Receive(_ context.Context, _ channel.Connection, body []byte) (channel.Inbound, error) {
	var m struct {
		User      string             `json:"user"`
		Pull      bool               `json:"pull"`
		Revisions []channel.Revision `json:"revisions"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return channel.Inbound{}, &channel.InboundError{Field: "body", Message: err.Error()}
	}
	if m.User != "owner" {
		return channel.Inbound{}, channel.ErrUnauthorized
	}
	if m.Pull {
		return channel.Inbound{Pull: true, Kind: channel.KindWebhook}, nil
	}
	return channel.Inbound{Revisions: m.Revisions, Kind: channel.KindReservation}, nil
}

func (p *pusher) Reply(_ channel.Inbound, applied []channel.Applied, err error) (string, []byte, int) {
	var ie *channel.InboundError
	switch {
	case errors.Is(err, channel.ErrUnauthorized):
		return "text/plain", []byte("refused: " + err.Error()), http.StatusUnauthorized
	case errors.As(err, &ie):
		return "text/plain", []byte("unreadable: " + err.Error()), http.StatusBadRequest
	case err != nil:
		return "text/plain", []byte("retry: " + err.Error()), http.StatusServiceUnavailable
	}
	p.replied = append(p.replied, applied)
	b, _ := json.Marshal(applied)
	return "application/json", b, http.StatusOK
}

// TestInboundRoute: an unknown adapter or token is 404 (counted by edge as a failed
// authentication), wrong credentials 401, an unreadable body the adapter's answer; a hint
// asks for a pull and is answered at once; revisions are applied before the reply, which
// names their bookings.
func TestInboundRoute(t *testing.T) {
	f := newFixture(t)
	ad := &pusher{}
	f.p.Adapters = map[string]channel.Adapter{channel.Channex: ad}
	var pulls []int64
	tel, err := telemetry.Setup(context.Background(), "inbound-route-test", "error")
	if err != nil {
		t.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: 1 << 20})
	(&inboundapi.API{Connections: f.cs, Log: f.log, Adapters: f.p.Adapters, Processor: f.p,
		PullNow: func(_ string, id int64) { pulls = append(pulls, id) }}).Register(app)
	post := func(adapter, token, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/internal/channels/inbound/"+adapter+"/"+token, strings.NewReader(body))
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	tok := f.conn.InboundToken
	for _, tc := range []struct {
		name, adapter, token, body string
		code                       int
	}{
		{"unknown token", channel.Channex, "nope", `{"user":"owner"}`, 404},
		{"unknown adapter", "other", tok, `{"user":"owner"}`, 404},
		{"another adapter's token", channel.OpenTravel, tok, `{"user":"owner"}`, 404},
		{"a token with a dot", channel.Channex, "a.b", `{"user":"owner"}`, 404},
		{"wrong credentials", channel.Channex, tok, `{"user":"intruder"}`, 401},
		{"unreadable", channel.Channex, tok, `{`, 400},
	} {
		if code, body := post(tc.adapter, tc.token, tc.body); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.code)
		}
	}
	if code, _ := post(channel.Channex, tok, `{"user":"owner","pull":true}`); code != 200 || len(pulls) != 1 || pulls[0] != f.conn.ID {
		t.Fatalf("webhook: %d, pulls %v", code, pulls)
	}
	if code, _ := post(channel.Channex, tok, `{"user":"owner"}`); code != 200 || len(pulls) != 1 {
		t.Fatalf("a message with nothing to do: %d, pulls %v", code, pulls)
	}
	revs, _ := json.Marshal([]channel.Revision{revision("new", "R1", "r1", 1, "2027-11-01", "2027-11-03")})
	code, body := post(channel.Channex, tok, `{"user":"owner","revisions":`+string(revs)+`}`)
	b, _ := f.led.booking("R1")
	if code != 200 || len(ad.replied) != 3 || ad.replied[2][0].BookingID != b.id || b.id == 0 {
		t.Fatalf("push: %d %s", code, body)
	}
	if f.logged(t, channel.KindWebhook, channel.StatusOK) != 1 || f.logged(t, channel.KindReservation, channel.StatusOK) < 3 || f.logged(t, channel.KindReservation, channel.StatusOK) < 2 {
		t.Errorf("log: %d webhook, %d reservation entries", f.logged(t, channel.KindWebhook, channel.StatusOK), f.logged(t, channel.KindReservation, channel.StatusOK))
	}
}
