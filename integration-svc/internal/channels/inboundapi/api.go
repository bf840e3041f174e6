// Package inboundapi serves the inbound route of channel managers (docs/channels.md, "Inbound
// routes"): POST /internal/channels/inbound/{adapter}/{token}, which edge forwards from the
// public /channels/{adapter}/{token} with an empty tenant. The token is the capability, as an
// iCal export's is: the route is mounted without the tenant check, an unknown token is 404
// (edge counts it as a failed authentication of the address).
package inboundapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/channels/inbound"
	"github.com/vros/vros/libs/httpapi"
)

// Path is the route's pattern.
const Path = "/internal/channels/inbound/:adapter/:token"

// API is the inbound route.
type API struct {
	Connections channel.Connections
	Log         channel.Log
	Adapters    map[string]channel.Adapter
	Processor   *inbound.Processor
	// PullNow asks for a pull of a connection's revisions feed (its webhook arrived).
	PullNow func(account string, connection int64)
	Logger  *slog.Logger
}

// Register mounts the route on app.
func (a *API) Register(app *fiber.App) {
	app.Post(Path, httpapi.Use(httpapi.EnvelopeA), a.receive)
}

// token tells whether s can be an inbound token: 1 to 128 letters, digits, '-' or '_'.
func token(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func notFound() error { return httpapi.NotFound(httpapi.StatusNotFound, "no such channel connection") }

func (a *API) receive(c *fiber.Ctx) error {
	adapter, tok := c.Params("adapter"), c.Params("token")
	ad, ok := a.Adapters[adapter]
	if !ok || !token(tok) {
		return notFound()
	}
	recv, ok := ad.(channel.Receiver)
	if !ok {
		return notFound()
	}
	ctx := c.UserContext()
	conn, err := a.Connections.ConnectionByToken(ctx, adapter, tok)
	if errors.Is(err, channel.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	// The message is processed within the request, but it is stored and logged: a copy of
	// its own, never the pooled request buffer.
	body := bytes.Clone(c.Body())
	start := time.Now()
	in, err := recv.Receive(ctx, conn, body)
	var ie *channel.InboundError
	switch {
	case errors.Is(err, channel.ErrUnauthorized), errors.As(err, &ie):
		// The protocol's own refusal (OpenTravel: an Errors RS of type 4 or 10).
		ct, out, status := recv.Reply(in, nil, err)
		a.append(ctx, conn, kindOf(in), channel.StatusError, status, "", err.Error(), start)
		return send(c, ct, out, status)
	case err != nil:
		return err
	}
	if in.Pull {
		// Channex's webhook is a hint: the revisions are always read from the feed.
		if a.PullNow != nil {
			a.PullNow(conn.Account, conn.ID)
		}
		ct, out, status := recv.Reply(in, nil, nil)
		a.append(ctx, conn, kindOf(in), channel.StatusOK, status, string(body), "", start)
		return send(c, ct, out, status)
	}
	if len(in.Revisions) == 0 {
		// A message of no interest (another event of a webhook): taken, nothing to do.
		ct, out, status := recv.Reply(in, nil, nil)
		a.append(ctx, conn, kindOf(in), channel.StatusOK, status, "", "", start)
		return send(c, ct, out, status)
	}
	applied, perr := a.Processor.Receive(ctx, conn, in.Revisions)
	ct, out, status := recv.Reply(in, applied, perr)
	st, msg := channel.StatusOK, ""
	if perr != nil {
		st, msg = channel.StatusRetrying, perr.Error()
	}
	// The message's revisions are logged one by one (card data masked by the adapter); the
	// message itself by its count.
	a.append(ctx, conn, kindOf(in), st, status, fmt.Sprintf(`{"revisions":%d}`, len(in.Revisions)), msg, start)
	return send(c, ct, out, status)
}

func kindOf(in channel.Inbound) string {
	if in.Kind != "" {
		return in.Kind
	}
	return channel.KindReservation
}

func send(c *fiber.Ctx, contentType string, body []byte, status int) error {
	if contentType != "" {
		c.Set(fiber.HeaderContentType, contentType)
	}
	return c.Status(status).Send(body)
}

// append logs the message as received.
func (a *API) append(ctx context.Context, conn channel.Connection, kind, status string, httpStatus int, request, errText string, start time.Time) {
	e := channel.LogEntry{Account: conn.Account, ConnectionID: conn.ID, Direction: "in", Kind: kind, Status: status, HTTPStatus: httpStatus,
		Request: request, Error: errText, At: start.UTC(), Duration: time.Since(start)}
	if err := a.Log.Append(ctx, e); err != nil && a.Logger != nil {
		a.Logger.Warn("channel: writing the log", "account", conn.Account, "connection", conn.ID, "err", err)
	}
}
