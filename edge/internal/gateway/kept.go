package gateway

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/vros/vros/edge/internal/kept"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// Answers kept at edge (docs/catalog.md, "Answers kept at edge"): catalog-svc marks the
// answers it keeps itself (search-rental, property-detail) with until when they hold and
// where its consumer stood; edge keeps them under everything the request sent the catalog,
// and answers the same request again itself while its Feed hears no change of the account
// the answer does not hold.

// maxKeptBody is the largest request body whose answer is kept: a search or a property
// page asks in a few hundred bytes.
const maxKeptBody = 4 << 10

// keptKey is the key of the answer to this request ("": never kept): the tenant as signed,
// the method, the path with its query, the headers edge sends and the body: all the catalog
// reads of a request. A conditional request or one with an idempotency key goes to the
// service, and so does any request to a path of which the catalog has not marked an answer
// yet (keep learns them): the other reads cost no key.
func (u *upstream) keptKey(c *fiber.Ctx, method, path string, body []byte, t tenancy.Tenant, extra []string) string {
	if u.kept == nil || t.AccountID == "" || len(body) > maxKeptBody ||
		(method != fiber.MethodGet && method != fiber.MethodPost) {
		return ""
	}
	if _, ok := u.keeps.Load(route(path)); !ok {
		return ""
	}
	for _, h := range forwardedHeaders {
		if len(c.Request().Header.Peek(h)) > 0 {
			return ""
		}
	}
	var b strings.Builder
	b.Grow(len(t.AccountID) + len(method) + len(path) + len(body) + 64)
	b.WriteString(t.AccountID)
	b.WriteByte(0)
	b.WriteString(strconv.FormatBool(t.Sandbox))
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(t.MaxProperties))
	b.WriteByte(0)
	b.WriteString(method)
	b.WriteByte(0)
	b.WriteString(path)
	b.WriteByte(0)
	if u.public != nil {
		b.WriteString(u.public())
	}
	for _, x := range extra {
		b.WriteByte(0)
		b.WriteString(x)
	}
	b.WriteByte(0)
	b.Write(body)
	return b.String()
}

// route is path without its query.
func route(path string) string {
	p, _, _ := strings.Cut(path, "?")
	return p
}

// keep keeps the service's answer to key when the catalog marked it (a 200 with both
// headers), and learns its path as one whose answers may be kept (the first marked answer
// of a path, asked without a key, is not kept). The answer is copied: resp is pooled.
func (u *upstream) keep(key, path, acc string, resp *fasthttp.Response) {
	if resp.StatusCode() != fiber.StatusOK {
		return
	}
	ms, err := strconv.ParseInt(string(resp.Header.Peek(httpapi.HeaderKeepUntil)), 10, 64)
	if err != nil {
		return
	}
	applied, err := events.ParsePositions(string(resp.Header.Peek(httpapi.HeaderApplied)))
	if err != nil || len(applied) == 0 {
		return
	}
	if key == "" {
		u.keeps.LoadOrStore(route(path), struct{}{})
		return
	}
	ans := kept.Answer{Status: fiber.StatusOK, Body: bytes.Clone(resp.Body())}
	for _, h := range answerHeaders {
		if v := resp.Header.Peek(h); len(v) > 0 {
			ans.Headers = append(ans.Headers, h, string(v))
		}
	}
	u.kept.Put(acc, key, ans, time.UnixMilli(ms), applied)
}

// sendKept answers with a kept answer. Its bytes are never changed: the response may send
// them as they are.
func sendKept(c *fiber.Ctx, ans kept.Answer) {
	c.Status(ans.Status)
	for i := 0; i+1 < len(ans.Headers); i += 2 {
		c.Response().Header.Set(ans.Headers[i], ans.Headers[i+1])
	}
	c.Response().SetBodyRaw(ans.Body)
	trace.SpanFromContext(c.UserContext()).SetAttributes(attribute.Bool("vros.answer.kept", true))
}
